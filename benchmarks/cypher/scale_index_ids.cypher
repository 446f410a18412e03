// Every index's id (the folder name of its files under schema/index), name and type.
SHOW INDEXES YIELD id, name, type
RETURN id, name, type
