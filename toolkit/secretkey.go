package toolkit

import (
	"strings"
	"unicode/utf8"
)

// secretKeys are the field names whose value is a credential whatever it
// looks like (docs/tools.md#sanitising), matched whole and ignoring case.
var secretKeys = []string{
	"access_token", "refresh_token", "id_token", "token", "secret", "client_secret", "password", "passwd",
	"api_key", "apikey", "authorization", "signature", "sig", "private_key", "webhook_secret", "cookie", "set-cookie",
}

// IsSecretField reports whether a field of this name holds a credential
// whose value is masked whole (password, token, authorization …): it is
// secretKey.MatchString, asked of every string in a tool's data and of
// every log field. An ASCII name is compared with the list
// directly (a key of another length cannot match); only a name with other
// runes goes to the regexp, whose case folding also matches 'ſ' for 's'
// and the Kelvin sign for 'k'.
func IsSecretField(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return secretKey.MatchString(name)
		}
	}
	for _, k := range secretKeys {
		if len(k) == len(name) && strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}
