package check

// ChainParent is the snapshot that recorded a response id, and its lineage
// turn (1 without lineage): what a Responses request that names the id in
// previous_response_id is keyed by (DESIGN §12.9 item 5).
type ChainParent struct {
	ID   string
	Turn int
}

// ChainParentOf returns the response id of a snapshot's stored body (the id
// a Responses request names in previous_response_id) and the snapshot as a
// chain parent; ok is false when the body has no string id. A snapshot
// trimmed for serving keeps the id in ResponseID.
func ChainParentOf(s *Snapshot) (responseID string, p ChainParent, ok bool) {
	if s == nil || s.Record == nil {
		return "", ChainParent{}, false
	}
	id := s.ResponseID // kept by a trimmed snapshot, which drops the body
	if id == "" {
		id, _ = s.Record.Response.Body["id"].(string)
	}
	if id == "" {
		return "", ChainParent{}, false
	}
	return id, ChainParent{ID: s.Record.ID, Turn: max(s.Record.Turn, 1)}, true
}
