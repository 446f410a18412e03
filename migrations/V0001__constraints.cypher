// V0001: uniqueness constraints on every id and the range indexes that filtering needs.
// Released migrations are never edited: add a new V<n>__<what>.cypher instead.
// Every statement is idempotent (IF NOT EXISTS) and valid on Neo4j 5.26 and 2026.x Community.

CREATE CONSTRAINT ontology_ontologyid IF NOT EXISTS
FOR (o:Ontology) REQUIRE o.ontologyid IS UNIQUE;

CREATE CONSTRAINT document_documentid IF NOT EXISTS
FOR (d:Document) REQUIRE d.documentid IS UNIQUE;

// Every fragment node also carries :Fragment; the per-label constraints let MERGE on
// (:Chapter {fragmentid}) etc. use an index, the :Fragment one guards ids across kinds.
CREATE CONSTRAINT fragment_fragmentid IF NOT EXISTS
FOR (f:Fragment) REQUIRE f.fragmentid IS UNIQUE;

CREATE CONSTRAINT chapter_fragmentid IF NOT EXISTS
FOR (c:Chapter) REQUIRE c.fragmentid IS UNIQUE;

CREATE CONSTRAINT paragraph_fragmentid IF NOT EXISTS
FOR (p:Paragraph) REQUIRE p.fragmentid IS UNIQUE;

CREATE CONSTRAINT summary_fragmentid IF NOT EXISTS
FOR (s:Summary) REQUIRE s.fragmentid IS UNIQUE;

CREATE CONSTRAINT keyword_fragmentid IF NOT EXISTS
FOR (k:Keyword) REQUIRE k.fragmentid IS UNIQUE;

CREATE CONSTRAINT dataset_datasetid IF NOT EXISTS
FOR (d:Dataset) REQUIRE d.datasetid IS UNIQUE;

CREATE CONSTRAINT goal_goalid IF NOT EXISTS
FOR (g:Goal) REQUIRE g.goalid IS UNIQUE;

// A category node is one (ontology, name, value) triple, shared by the documents that have it.
// The composite uniqueness constraint (Community has no node keys) makes concurrent MERGE safe
// and is backed by a range index on (ontologyid, name, value).
CREATE CONSTRAINT category_ontologyid_name_value IF NOT EXISTS
FOR (c:Category) REQUIRE (c.ontologyid, c.name, c.value) IS UNIQUE;

// Category searches without an ontology look up (name, value) only.
CREATE INDEX category_name_value IF NOT EXISTS
FOR (c:Category) ON (c.name, c.value);

// Grouping fragments by document needs no traversal.
CREATE INDEX fragment_documentid IF NOT EXISTS
FOR (f:Fragment) ON (f.documentid);

// Datasets are listed by session.
CREATE INDEX dataset_session IF NOT EXISTS
FOR (d:Dataset) ON (d.session);
