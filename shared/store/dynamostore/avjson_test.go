package dynamostore_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The item fixtures (testdata/items) hold items as DynamoDB's own JSON shows
// them ({"pk": {"S": "…"}}), the form its console and CLI give and take:
// itemJSON and itemFromJSON convert between it and the SDK's attribute
// values. Test code only: the store itself uses the SDK's types.

func itemJSON(item map[string]types.AttributeValue) (map[string]any, error) {
	out := make(map[string]any, len(item))
	for k, v := range item {
		j, err := valueJSON(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = j
	}
	return out, nil
}

func valueJSON(v types.AttributeValue) (map[string]any, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}, nil
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}, nil
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}, nil
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}, nil
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}, nil
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}, nil
	case *types.AttributeValueMemberBS:
		bs := make([]string, len(v.Value))
		for i, b := range v.Value {
			bs[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string]any{"BS": bs}, nil
	case *types.AttributeValueMemberM:
		m, err := itemJSON(v.Value)
		return map[string]any{"M": m}, err
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			j, err := valueJSON(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			l[i] = j
		}
		return map[string]any{"L": l}, nil
	}
	return nil, fmt.Errorf("attribute value %T", v)
}

func itemFromJSON(raw json.RawMessage) (map[string]types.AttributeValue, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, r := range m {
		v, err := valueFromJSON(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

func valueFromJSON(raw json.RawMessage) (types.AttributeValue, error) {
	var typed map[string]json.RawMessage
	if err := json.Unmarshal(raw, &typed); err != nil {
		return nil, err
	}
	if len(typed) != 1 {
		return nil, fmt.Errorf("%d type keys, want 1", len(typed))
	}
	return decodeTyped(typed)
}

func decodeTyped(typed map[string]json.RawMessage) (types.AttributeValue, error) {
	for t, r := range typed {
		switch t {
		case "S":
			var s string
			err := json.Unmarshal(r, &s)
			return &types.AttributeValueMemberS{Value: s}, err
		case "N":
			var s string
			err := json.Unmarshal(r, &s)
			return &types.AttributeValueMemberN{Value: s}, err
		case "B":
			var s string
			if err := json.Unmarshal(r, &s); err != nil {
				return nil, err
			}
			b, err := base64.StdEncoding.DecodeString(s)
			return &types.AttributeValueMemberB{Value: b}, err
		case "BOOL":
			var b bool
			err := json.Unmarshal(r, &b)
			return &types.AttributeValueMemberBOOL{Value: b}, err
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}, nil
		case "SS", "NS":
			var ss []string
			if err := json.Unmarshal(r, &ss); err != nil {
				return nil, err
			}
			if t == "SS" {
				return &types.AttributeValueMemberSS{Value: ss}, nil
			}
			return &types.AttributeValueMemberNS{Value: ss}, nil
		case "BS":
			var ss []string
			if err := json.Unmarshal(r, &ss); err != nil {
				return nil, err
			}
			bs := make([][]byte, len(ss))
			for i, s := range ss {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return nil, err
				}
				bs[i] = b
			}
			return &types.AttributeValueMemberBS{Value: bs}, nil
		case "M":
			m, err := itemFromJSON(r)
			return &types.AttributeValueMemberM{Value: m}, err
		case "L":
			var rs []json.RawMessage
			if err := json.Unmarshal(r, &rs); err != nil {
				return nil, err
			}
			l := make([]types.AttributeValue, len(rs))
			for i, e := range rs {
				v, err := valueFromJSON(e)
				if err != nil {
					return nil, fmt.Errorf("[%d]: %w", i, err)
				}
				l[i] = v
			}
			return &types.AttributeValueMemberL{Value: l}, nil
		}
		return nil, fmt.Errorf("unknown attribute type %q", t)
	}
	return nil, fmt.Errorf("no attribute type")
}
