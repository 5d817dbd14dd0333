package toolkit

import (
	"reflect"
	"testing"
)

func TestHashView(t *testing.T) {
	type row struct {
		Kept     string `json:"kept,omitempty"`
		Untagged int
		Skipped  string `json:"skipped" hash:"-"`
		NotJSON  string `json:"-"`
		private  string
	}
	got, err := HashView(&row{Skipped: "x", NotJSON: "y", private: "z"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"kept": "", "Untagged": 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("HashView = %v, want %v", got, want)
	}
	if _, err := HashView(3); err == nil {
		t.Fatal("a non-struct must be refused")
	}
}
