// Whether the server has the thalabus procedure plugin (its version procedure), read once per
// connection before its version is asked: a server without it answers 0, not an error.
SHOW PROCEDURES YIELD name WHERE name = 'thalabus.version'
RETURN count(*) AS found
