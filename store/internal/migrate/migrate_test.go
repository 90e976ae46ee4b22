package migrate

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []Migration
		wantErr string
	}{
		{
			name: "sorted by version, non-sql ignored",
			files: fstest.MapFS{
				"m/0002_more.sql": {Data: []byte("B")},
				"m/0001_init.sql": {Data: []byte("A")},
				"m/README":        {Data: []byte("x")},
			},
			want: []Migration{{1, "init", "A"}, {2, "more", "B"}},
		},
		{name: "bad name", files: fstest.MapFS{"m/init.sql": {}}, wantErr: "NNNN_name.sql"},
		{name: "zero version", files: fstest.MapFS{"m/0000_x.sql": {}}, wantErr: "NNNN_name.sql"},
		{name: "duplicate", files: fstest.MapFS{"m/1_a.sql": {}, "m/0001_b.sql": {}}, wantErr: "used by"},
		{name: "missing dir", files: fstest.MapFS{}, wantErr: "migrate:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.files, "m")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPending(t *testing.T) {
	ms := []Migration{{Version: 1}, {Version: 2}, {Version: 3}}
	tests := []struct {
		name    string
		applied []int
		want    []int
		wantErr bool
	}{
		{name: "fresh", applied: nil, want: []int{1, 2, 3}},
		{name: "partly", applied: []int{1}, want: []int{2, 3}},
		{name: "all", applied: []int{1, 2, 3}, want: nil},
		{name: "newer database", applied: []int{1, 2, 3, 4}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Pending(ms, tt.applied)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			var vs []int
			for _, m := range got {
				vs = append(vs, m.Version)
			}
			if !reflect.DeepEqual(vs, tt.want) {
				t.Fatalf("pending = %v, want %v", vs, tt.want)
			}
		})
	}
}
