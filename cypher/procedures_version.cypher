// The engine version the server's procedure plugin implements (thalabus.version()).
CALL thalabus.version() YIELD version
RETURN version
