package replaycase

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReasonCodes is exactly the Reason* constants of reasons.go: a code declared but not listed
// would be refused by the receiver's select.reason_codes although rows carry it.
func TestReasonCodesListsEveryDeclaredCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "reasons.go", nil, 0)
	require.NoError(t, err)
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if lit, ok := vs.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(name.Name, "Reason") {
				code, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				declared = append(declared, code)
			}
		}
		return true
	})
	require.Greater(t, len(declared), 20, "reasons.go declares the reason codes")
	assert.Equal(t, declared, ReasonCodes(), "in declaration order")
	assert.True(t, IsReasonCode(ReasonLateSpans))
	assert.False(t, IsReasonCode("late_span"))
}
