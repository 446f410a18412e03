// A no-op read: run with bookmarks, its transaction starts only once the server has applied
// them (Database.wait_for), so waiting for another process's writes fails or succeeds here.
RETURN 1 AS applied
