package fakeupstream

import "bytes"

// object is a JSON object that keeps its members in the order they were
// given (the provider's own order), where a map would sort them.
type object []member

type member struct {
	key   string
	value any
}

// fields builds an object from key, value pairs.
func fields(kv ...any) object {
	if len(kv)%2 != 0 {
		panic("fields: odd number of arguments")
	}
	o := make(object, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		o = append(o, member{kv[i].(string), kv[i+1]})
	}
	return o
}

// with returns a copy of o with key set to v (in place when present, else
// appended).
func (o object) with(key string, v any) object {
	out := make(object, len(o), len(o)+1)
	copy(out, o)
	for i := range out {
		if out[i].key == key {
			out[i].value = v
			return out
		}
	}
	return append(out, member{key, v})
}

// get returns the value of key (nil when absent).
func (o object) get(key string) any {
	for _, m := range o {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(marshal(m.key, ""))
		buf.WriteByte(':')
		buf.Write(marshal(m.value, ""))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
