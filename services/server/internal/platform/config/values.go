package config

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"time"

	"bothy/server/internal/kernel/hostlist"
)

// Values are the loaded, validated values of every key. They are immutable
// and safe for concurrent use.
//
// The accessors panic when the name is not registered or is of another kind:
// both are programming errors, and internal/wire reads every key once at
// start-up (Bind), so they show in the first test run.
type Values struct {
	reg  *Registry
	vals map[string]any
	src  map[string]Source
}

func (v *Values) get(name, accessor string, want ...Kind) any {
	k, ok := v.reg.Lookup(name)
	if !ok {
		panic("config: " + name + " is not a registered key")
	}
	if !slices.Contains(want, k.Kind) {
		panic("config: " + name + " is of kind " + string(k.Kind) + ", not " + accessor)
	}
	return v.vals[name]
}

// Int returns the value of an int key.
func (v *Values) Int(name string) int { return int(v.get(name, "int", KindInt).(int64)) }

// Bytes returns the value of a byte size key in bytes.
func (v *Values) Bytes(name string) int64 { return v.get(name, "byte_size", KindByteSize).(int64) }

// Duration returns the value of a duration key.
func (v *Values) Duration(name string) time.Duration {
	return v.get(name, "duration", KindDuration).(time.Duration)
}

// Bool returns the value of a bool key.
func (v *Values) Bool(name string) bool { return v.get(name, "bool", KindBool).(bool) }

// String returns the value of a string, URL, address, path or secret
// reference key ("" for an Optional key that is not set). A secret reference
// comes with its placeholders resolved.
func (v *Values) String(name string) string {
	return v.get(name, "string", KindString, KindURL, KindAddress, KindPath, KindSecretRef).(string)
}

// Strings returns a copy of the entries of a list key as written (trimmed,
// without empty entries).
func (v *Values) Strings(name string) []string {
	switch x := v.get(name, "string_list", KindStringList, KindHostList).(type) {
	case hostValue:
		return slices.Clone(x.raw)
	case []string:
		return slices.Clone(x)
	}
	return nil
}

// HostList returns the parsed entries of a host list key.
func (v *Values) HostList(name string) hostlist.List {
	return slices.Clone(v.get(name, "host_list", KindHostList).(hostValue).list)
}

// Source tells where the value of a key came from.
func (v *Values) Source(name string) Source {
	if _, ok := v.reg.Lookup(name); !ok {
		panic("config: " + name + " is not a registered key")
	}
	return v.src[name]
}

// GoString shows the number of keys and never a value.
func (v *Values) GoString() string { return "config.Values{" + strconv.Itoa(len(v.vals)) + " keys}" }

// Format prints GoString for every verb, so no value leaks through fmt.
func (v *Values) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, v.GoString()) }

// LogValue makes slog print GoString.
func (v *Values) LogValue() slog.Value { return slog.StringValue(v.GoString()) }

// boundField is one struct field tagged `config:"key.name"`.
type boundField struct {
	index []int
	field reflect.StructField
	name  string
}

// boundFields lists the tagged fields of struct type t, descending into
// untagged struct fields, in declaration order.
func boundFields(t reflect.Type, prefix []int) ([]boundField, error) {
	var out []boundField
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(slices.Clone(prefix), i)
		name, tagged := f.Tag.Lookup("config")
		if !tagged {
			if f.Type.Kind() == reflect.Struct && f.IsExported() && f.Type != reflect.TypeFor[time.Time]() {
				inner, err := boundFields(f.Type, index)
				if err != nil {
					return nil, err
				}
				out = append(out, inner...)
			}
			continue
		}
		if !f.IsExported() {
			return nil, fmt.Errorf("config: field %s tagged %s is not exported", f.Name, name)
		}
		out = append(out, boundField{index: index, field: f, name: name})
	}
	return out, nil
}

func structOf(dst any) (reflect.Value, error) {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, fmt.Errorf("config: Bind needs a non-nil pointer to a struct, not %T", dst)
	}
	return rv.Elem(), nil
}

// BoundKeys returns the key names of the tagged fields of *dst in
// declaration order, so a test can prove that a struct covers every key.
func BoundKeys(dst any) ([]string, error) {
	s, err := structOf(dst)
	if err != nil {
		return nil, err
	}
	fs, err := boundFields(s.Type(), nil)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names, nil
}

// Bind fills every field of the struct *dst tagged `config:"key.name"` with
// the key's value, descending into untagged struct fields. Field types by
// kind: time.Duration (duration), any signed integer (int, byte size; an
// overflow is an error), bool, string (text kinds), []string (lists) and
// hostlist.List (host lists). A mismatch is an error naming field and key.
func (v *Values) Bind(dst any) error {
	s, err := structOf(dst)
	if err != nil {
		return err
	}
	fs, err := boundFields(s.Type(), nil)
	if err != nil {
		return err
	}
	for _, bf := range fs {
		if err := v.bindField(s.FieldByIndex(bf.index), bf); err != nil {
			return err
		}
	}
	return nil
}

func (v *Values) bindField(fv reflect.Value, bf boundField) error {
	k, ok := v.reg.Lookup(bf.name)
	if !ok {
		return fmt.Errorf("config: field %s names %s, which is not a registered key", bf.field.Name, bf.name)
	}
	mismatch := fmt.Errorf("config: field %s of type %s cannot hold %s of kind %s", bf.field.Name, bf.field.Type, k.Name, k.Kind)
	t := bf.field.Type
	switch {
	case t == reflect.TypeFor[time.Duration]():
		if k.Kind != KindDuration {
			return mismatch
		}
		fv.SetInt(int64(v.Duration(k.Name)))
	case t == reflect.TypeFor[hostlist.List]():
		if k.Kind != KindHostList {
			return mismatch
		}
		fv.Set(reflect.ValueOf(v.HostList(k.Name)))
	case t == reflect.TypeFor[[]string]():
		if !kinds[k.Kind].list {
			return mismatch
		}
		fv.Set(reflect.ValueOf(v.Strings(k.Name)))
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		var n int64
		switch k.Kind {
		case KindInt:
			n = int64(v.Int(k.Name))
		case KindByteSize:
			n = v.Bytes(k.Name)
		default:
			return mismatch
		}
		if fv.OverflowInt(n) {
			return fmt.Errorf("config: field %s of type %s is too small for %s", bf.field.Name, t, k.Name)
		}
		fv.SetInt(n)
	case t.Kind() == reflect.Bool:
		if k.Kind != KindBool {
			return mismatch
		}
		fv.SetBool(v.Bool(k.Name))
	case t.Kind() == reflect.String:
		if !kinds[k.Kind].text {
			return mismatch
		}
		fv.SetString(v.String(k.Name))
	default:
		return mismatch
	}
	return nil
}
