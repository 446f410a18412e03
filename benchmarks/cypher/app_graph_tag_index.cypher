// A range index on the application's Tag name, as an application looking tags up by name has.
CREATE INDEX app_graph_tag_name IF NOT EXISTS FOR (t:Tag) ON (t.name)
