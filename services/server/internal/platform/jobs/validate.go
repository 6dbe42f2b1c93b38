package jobs

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// kindRE is the form of a kind: lower-case words of letters, digits and
// underscores joined by dots, the module first (apps.webhook_deliver).
var kindRE = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// ValidateArgsType checks the type of sample as an args type, with sample's
// values for the JSON round trip. Register runs it on the zero value; tests
// run it on a filled value. The rules:
//
//   - the type is a struct (not a pointer), because River decodes into a
//     value of the type;
//   - Kind is dotted lower case like apps.webhook_deliver and constant (the
//     zero value gives the same kind);
//   - every field, in nested structs too, is exported and not skipped with
//     `json:"-"`, so nothing is silently lost when the job is stored;
//     interface, func, chan and complex fields are refused because they do
//     not decode to what was stored; types with their own JSON or text
//     encoding (time.Time, ids.ID) are taken as they are;
//   - encoding sample to JSON and decoding it gives a value equal to sample
//     (times compare with time.Time.Equal) that encodes to the same JSON.
//
// The error names the kind and the field at fault, never a value.
func ValidateArgsType(sample Args) error {
	if sample == nil {
		return errors.New("jobs: args type check got nil")
	}
	t := reflect.TypeOf(sample)
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("jobs: args type %s must be a struct, not %s", t, t.Kind())
	}
	kind := sample.Kind()
	if !kindRE.MatchString(kind) {
		return fmt.Errorf("jobs: args type %s has kind %q; a kind is dotted lower case like apps.webhook_deliver", t, kind)
	}
	if zero := reflect.Zero(t).Interface().(Args).Kind(); zero != kind {
		return fmt.Errorf("jobs: args type %s must have a constant kind", t)
	}
	if err := checkFields(t, t.Name()); err != nil {
		return fmt.Errorf("jobs: kind %s: %w", kind, err)
	}

	raw, err := json.Marshal(sample)
	if err != nil {
		return fmt.Errorf("jobs: kind %s does not encode to JSON: %w", kind, err)
	}
	back := reflect.New(t)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(back.Interface()); err != nil {
		return fmt.Errorf("jobs: kind %s does not decode from its own JSON: %w", kind, err)
	}
	again, err := json.Marshal(back.Elem().Interface())
	if err != nil || !bytes.Equal(raw, again) || !equal(reflect.ValueOf(sample), back.Elem()) {
		return fmt.Errorf("jobs: kind %s does not survive a JSON round trip", kind)
	}
	return nil
}

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// encodesItself reports whether t has its own JSON or text encoding, in which
// case its fields are its own business.
func encodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return (t.Implements(jsonMarshaler) || p.Implements(jsonMarshaler)) && p.Implements(jsonUnmarshaler) ||
		(t.Implements(textMarshaler) || p.Implements(textMarshaler)) && p.Implements(textUnmarshaler)
}

func checkFields(t reflect.Type, path string) error {
	if encodesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return fmt.Errorf("field %s has a type that JSON does not round trip (%s)", path, t.Kind())
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkFields(t.Elem(), path)
	case reflect.Map:
		if err := checkFields(t.Key(), path); err != nil {
			return err
		}
		return checkFields(t.Elem(), path)
	case reflect.Struct:
		for f := range t.Fields() {
			name := path + "." + f.Name
			if !f.IsExported() {
				return fmt.Errorf("field %s is unexported and would be lost", name)
			}
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == "-" {
				return fmt.Errorf("field %s is skipped by its json tag and would be lost", name)
			}
			if err := checkFields(f.Type, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// equal is reflect.DeepEqual except that times compare by instant: a
// round trip through JSON drops the monotonic reading and may change the
// location.
func equal(a, b reflect.Value) bool {
	if a.Type() == timeType {
		return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
	}
	switch a.Kind() {
	case reflect.Struct:
		if encodesItself(a.Type()) {
			return reflect.DeepEqual(a.Interface(), b.Interface())
		}
		for i := range a.NumField() {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			other := b.MapIndex(it.Key())
			if !other.IsValid() || !equal(it.Value(), other) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}
