package workflows

import (
	"fmt"
	"regexp"
)

// DraftOrderIDPrefix starts every draft-order workflow id.
const DraftOrderIDPrefix = "draft-order/"

var (
	// userIDPattern: an opaque account id such as u_123. It starts with a
	// letter and has no '@', spaces or '+', so neither an e-mail address
	// nor a phone number can become part of a workflow id (ids are shown
	// to every Web UI user and kept in visibility indexes).
	userIDPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	// idempotencyKeyPattern matches the envelope schema's idempotency_key
	// (schemas/envelope.request.json) minus '/', which separates the parts
	// of the workflow id.
	idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{8,128}$`)
	// onlyDigits is a key that is a number once separators are ignored: a
	// phone, card or document number used as a key, never a generated token.
	onlyDigits = regexp.MustCompile(`^[0-9._:-]*$`)
)

// DraftOrderID is the workflow id of a user's draft order:
// draft-order/{user_id}/{idempotency_key}. The id is the idempotency key of
// the whole flow: starting twice with the same key reaches the same run.
// Both parts are checked so that no PII and no separator can slip into an
// id; an invalid part is an error rather than an empty id, because the
// client would replace an empty id with a random one and so lose
// idempotency.
func DraftOrderID(userID, idempotencyKey string) (string, error) {
	if err := CheckUserID(userID); err != nil {
		return "", err
	}
	if err := CheckIdempotencyKey(idempotencyKey); err != nil {
		return "", err
	}
	return DraftOrderIDPrefix + userID + "/" + idempotencyKey, nil
}

// CheckUserID refuses a user id that is not an opaque account id.
func CheckUserID(userID string) error {
	if !userIDPattern.MatchString(userID) {
		return fmt.Errorf("user_id must be an opaque account id (a letter, then up to 63 of A-Z a-z 0-9 _ -), not an e-mail, name or phone number")
	}
	return nil
}

// CheckIdempotencyKey refuses a key the envelope schema would refuse, or a
// bare number (which is how a phone or document number would arrive).
func CheckIdempotencyKey(key string) error { return CheckKey("idempotency_key", key) }

// CheckKey is CheckIdempotencyKey for the field that carries the key:
// idempotency_key, or request_id where a read's request id is its key
// (toolcall.ID). The message names the field the caller sent.
func CheckKey(field, key string) error {
	if !idempotencyKeyPattern.MatchString(key) {
		return fmt.Errorf("%s must be 8 to 128 of A-Z a-z 0-9 . _ : -", field)
	}
	if onlyDigits.MatchString(key) {
		return fmt.Errorf("%s must be a generated token (e.g. a UUID), not a bare number", field)
	}
	return nil
}
