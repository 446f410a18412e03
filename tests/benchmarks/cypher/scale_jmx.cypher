// The JMX beans matching $query (a JMX object name pattern), with their attributes.
CALL dbms.queryJmx($query) YIELD name, attributes
RETURN name, attributes
