CREATE (ds:Dataset {datasetid: $datasetid, name: $name, kind: $kind, query: $query,
                    created_at: datetime(), session: $session, number: $number,
                    size: $size})
RETURN ds.datasetid AS datasetid
