// The JMX beans matching $pattern (a JMX object name pattern), with their attributes.
CALL dbms.queryJmx($pattern) YIELD name, attributes
RETURN name, attributes
