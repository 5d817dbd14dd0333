package workflows

import "testing"

func TestDraftOrderID(t *testing.T) {
	id, err := DraftOrderID("u_123", "3f2b8c1e-7d4a-4c55-9e0f-1a2b3c4d5e6f")
	if err != nil || id != "draft-order/u_123/3f2b8c1e-7d4a-4c55-9e0f-1a2b3c4d5e6f" {
		t.Fatalf("DraftOrderID = %q, %v", id, err)
	}
	bad := []struct{ user, key string }{
		{"jane.doe@example.com", "key-00000001"}, // e-mail as user id
		{"+15551234567", "key-00000001"},         // phone as user id
		{"Jane Doe", "key-00000001"},             // name with a space
		{"u_1/evil", "key-00000001"},             // separator
		{"", "key-00000001"},
		{"u_123", "short"},            // below the envelope's 8
		{"u_123", "a/b/c/d/e/f/g"},    // separator
		{"u_123", "15551234567"},      // a bare number
		{"u_123", "555-123-4567"},     // a formatted phone number
		{"u_123", "jane@example.com"}, // '@' is outside the charset
	}
	for _, b := range bad {
		if id, err := DraftOrderID(b.user, b.key); err == nil {
			t.Errorf("DraftOrderID(%q, %q) = %q, want an error", b.user, b.key, id)
		}
	}
}
