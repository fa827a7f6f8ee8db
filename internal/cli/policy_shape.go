package cli

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// policyShape checks that a policy file's keys hold the YAML shapes Policy reads, so that a
// wrong one is reported by its key and the shape to write rather than by yaml's Go type names
// ("cannot unmarshal !!str into []casediff.FindingType"). Only the shapes: the values are
// checked by loadPolicy, unknown keys and syntax by the decoder.
func policyShape(b []byte) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil || len(doc.Content) == 0 {
		return nil // syntax errors and an empty file are the decoder's to report
	}
	top := resolved(doc.Content[0])
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		return shapeError("", "a map of fail_on and allow", top)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		value := resolved(top.Content[i+1])
		if isNull(value) {
			continue
		}
		switch top.Content[i].Value {
		case "fail_on":
			if value.Kind != yaml.SequenceNode {
				return shapeError("fail_on", "a list of finding types, e.g. fail_on: [tool_args_changed]", value)
			}
		case "allow":
			if value.Kind != yaml.SequenceNode {
				return shapeError("allow", `a list of rules, each "- type: …"`, value)
			}
			for j, rule := range value.Content {
				if err := allowRuleShape(fmt.Sprintf("allow[%d]", j), resolved(rule)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func allowRuleShape(key string, rule *yaml.Node) error {
	if rule.Kind != yaml.MappingNode {
		return shapeError(key, `a rule with type, path or case, e.g. "- type: usage_changed"`, rule)
	}
	for i := 0; i+1 < len(rule.Content); i += 2 {
		noun, known := ruleFieldNoun[rule.Content[i].Value] // unknown keys are the decoder's to report
		if value := resolved(rule.Content[i+1]); known && value.Kind != yaml.ScalarNode {
			return shapeError(key+"."+rule.Content[i].Value, "one "+noun, value)
		}
	}
	return nil
}

var ruleFieldNoun = map[string]string{"type": "finding type", "path": "path pattern", "case": "case id"}

func resolved(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func shapeError(key, want string, got *yaml.Node) error {
	held := map[yaml.Kind]string{yaml.ScalarNode: "a single value", yaml.MappingNode: "a map", yaml.SequenceNode: "a list"}[got.Kind]
	if key != "" {
		key += ": "
	}
	return fmt.Errorf("%swant %s (line %d holds %s)", key, want, got.Line, held)
}
