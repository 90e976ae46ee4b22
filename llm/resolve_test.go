package llm

import (
	"encoding/json"
	"errors"
	"io/fs"
	"testing"
)

// fixed resolves one name, or answers with err.
type fixed struct {
	name string
	err  error
}

func (f fixed) Resolve(name string, _ json.RawMessage) (*Model, error) {
	if f.err != nil {
		return nil, f.err
	}
	if name != f.name {
		return nil, &UnknownModelError{Name: name}
	}
	return &Model{Name: name, ID: f.name}, nil
}

func TestChain(t *testing.T) {
	broken := errors.New("config unreadable")
	missing := &UnknownModelError{Name: "script:x.json", Err: fs.ErrNotExist}
	tests := []struct {
		name      string
		resolvers []Resolver
		ask       string
		wantModel string
		wantErr   string
		is        []error
	}{
		{"first wins", []Resolver{fixed{name: "a"}, fixed{name: "a"}}, "a", "a", "", nil},
		{"second knows", []Resolver{fixed{name: "a"}, fixed{name: "b"}}, "b", "b", "", nil},
		{"other error stops the chain", []Resolver{fixed{err: broken}, fixed{name: "b"}}, "b", "", "config unreadable", []error{broken}},
		{"all unknown", []Resolver{fixed{name: "a"}, fixed{name: "b"}}, "c", "", `unknown model "c"`, []error{ErrUnknownModel}},
		{"no resolvers", nil, "c", "", `unknown model "c"`, []error{ErrUnknownModel}},
		{"reason kept", []Resolver{fixed{name: "a"}, fixed{err: missing}}, "script:x.json", "",
			`unknown model "script:x.json": file does not exist`, []error{ErrUnknownModel, fs.ErrNotExist}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Chain(tt.resolvers...).Resolve(tt.ask, nil)
			if tt.wantErr == "" {
				if err != nil || m.Name != tt.wantModel {
					t.Fatalf("Resolve = %v, %v; want model %q", m, err, tt.wantModel)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Resolve error = %v, want %q", err, tt.wantErr)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("error %v is not %v", err, target)
				}
			}
		})
	}
}
