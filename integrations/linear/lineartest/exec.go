package lineartest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"
)

// obj is a GraphQL object as the fake hands it to the projector: field name
// -> value, where a value is a scalar (string, bool, float64, int, int64,
// time.Time, map[string]any for JSONObject, nil), an obj, a []obj, or a
// lazy func(args) (any, error) for fields with arguments (connections).
// "__typename" must be set.
type obj map[string]any

type lazy func(args map[string]any) (any, error)

// execCtx is one operation being executed.
type execCtx struct {
	schema *ast.Schema
	doc    *ast.QueryDocument
	vars   map[string]any
}

// CheckQuery parses and validates a GraphQL document against the embedded
// schema, coercing nothing, and reports any use of a deprecated member.
// Use it to lint operations.graphql in a test.
func CheckQuery(query string) error {
	schema, err := Schema()
	if err != nil {
		return err
	}
	doc, errs := gqlparser.LoadQuery(schema, query)
	if len(errs) > 0 {
		return errs
	}
	var deps []string
	for _, op := range doc.Operations {
		deps = append(deps, deprecatedUses(schema, doc, op)...)
	}
	if len(deps) > 0 {
		return fmt.Errorf("deprecated schema members used: %s", strings.Join(dedupe(deps), "; "))
	}
	return nil
}

// loseReplyOf reports whether a FailAfterCommitOf applies to an operation
// with these root fields, and counts it; called with s.mu held.
func (s *Server) loseReplyOf(fields []string) bool {
	for _, f := range fields {
		if s.failAfterCommitOf[f] > 0 {
			s.failAfterCommitOf[f]--
			return true
		}
	}
	return false
}

// execute runs a decoded request; called with s.mu held.
func (s *Server) execute(w http.ResponseWriter, req *gqlRequest, rawVars map[string]any, call *Call) {
	schema, _ := Schema()
	doc, errs := gqlparser.LoadQuery(schema, req.Query)
	if len(errs) > 0 {
		call.Outcome = "rejected"
		list := make([]any, 0, len(errs))
		var msgs []string
		for _, e := range errs {
			m := map[string]any{"message": e.Message, "extensions": map[string]any{
				"code": "GRAPHQL_VALIDATION_FAILED", "type": "graphql error", "statusCode": 400}}
			if len(e.Locations) > 0 {
				m["locations"] = e.Locations
			}
			list = append(list, m)
			msgs = append(msgs, e.Message)
		}
		s.reportReject("invalid query: %s", strings.Join(msgs, "; "))
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": list})
		return
	}
	reject := func(code, format string, a ...any) {
		call.Outcome = "rejected"
		msg := fmt.Sprintf(format, a...)
		s.reportReject("%s", msg)
		writeErrors(w, http.StatusBadRequest, &apiError{msg: msg, code: code, typ: "graphql error", status: 400})
	}

	var op *ast.OperationDefinition
	switch {
	case req.OperationName != "":
		op = doc.Operations.ForName(req.OperationName)
		if op == nil {
			reject("GRAPHQL_VALIDATION_FAILED", "Unknown operation named %q.", req.OperationName)
			return
		}
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	default:
		reject("GRAPHQL_VALIDATION_FAILED", "Must provide operation name if query contains multiple operations.")
		return
	}
	call.Operation = op.Name
	if op.Operation == ast.Subscription {
		reject("FAKE_UNIMPLEMENTED", "lineartest: subscriptions are not supported")
		return
	}

	vars, err := validator.VariableValues(schema, op, rawVars)
	if err != nil {
		reject("BAD_USER_INPUT", "Variable error: %v", err)
		return
	}
	var deps []string
	if vars, err = coerceVariables(schema, op, vars, &deps); err != nil {
		reject("BAD_USER_INPUT", "Variable error: %v", err)
		return
	}
	deps = append(deps, deprecatedUses(schema, doc, op)...)
	if len(deps) > 0 {
		reject("FAKE_DEPRECATED", "lineartest: deprecated schema member used: %s", strings.Join(dedupe(deps), "; "))
		return
	}

	ex := &execCtx{schema: schema, doc: doc, vars: vars}
	rootType := "Query"
	resolvers := queryResolvers()
	if op.Operation == ast.Mutation {
		rootType, resolvers = "Mutation", mutationResolvers()
	}
	fields := ex.collectFields(op.SelectionSet, rootType)
	for _, f := range fields {
		call.RootFields = append(call.RootFields, f.Name)
	}
	for _, f := range fields {
		if _, ok := resolvers[f.Name]; !ok && f.Name != "__typename" {
			names := make([]string, 0, len(resolvers))
			for n := range resolvers {
				names = append(names, n)
			}
			sort.Strings(names)
			reject("FAKE_UNIMPLEMENTED", "lineartest: root field %s.%s is not implemented by the fake (implemented: %s)",
				rootType, f.Name, strings.Join(names, ", "))
			return
		}
	}

	cost := int(math.Ceil(ex.cost(op.SelectionSet, rootType)))
	w.Header().Set("X-Complexity", strconv.Itoa(cost))
	w.Header().Set("X-RateLimit-Complexity-Remaining", strconv.Itoa(max(ComplexityLimit-cost, 0)))
	if cost > MaxComplexity {
		// Message and code are not verified against the live API.
		reject("QUERY_TOO_COMPLEX", "Query too complex: complexity %d exceeds the maximum of %d", cost, MaxComplexity)
		return
	}

	call.Executed = true
	data := newOrdered()
	var gerrs []any
	nullData, unimplemented := false, false
	var ran []string
	for _, f := range fields {
		if f.Name == "__typename" {
			data.set(f.Alias, rootType)
			continue
		}
		if op.Operation == ast.Mutation {
			ran = append(ran, f.Name)
		}
		v, err := ex.resolveRoot(s, resolvers[f.Name], f)
		if err != nil {
			ae := asAPIError(err)
			if ae.code == "FAKE_UNIMPLEMENTED" {
				unimplemented = true
			}
			gerrs = append(gerrs, ae.gql(f.Alias))
			if f.Definition.Type.NonNull {
				nullData = true
				break
			}
			data.set(f.Alias, nil)
			continue
		}
		data.merge(f.Alias, v)
	}

	if unimplemented {
		call.Outcome, call.Executed = "rejected", false
		msgs := make([]string, len(gerrs))
		for i, e := range gerrs {
			msgs[i] = e.(map[string]any)["message"].(string)
		}
		s.reportReject("%s", strings.Join(msgs, "; "))
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": gerrs})
		return
	}
	for _, name := range ran {
		s.mutations[name]++
	}
	lost := s.failAfterCommit > 0
	if lost {
		s.failAfterCommit--
	} else {
		lost = s.loseReplyOf(call.RootFields)
	}
	if lost {
		call.Outcome = "lost"
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintln(w, "502 Bad Gateway (lineartest: injected after the operation was executed)")
		return
	}
	out := newOrdered()
	if nullData {
		out.set("data", nil)
	} else {
		out.set("data", data)
	}
	call.Outcome = "ok"
	if len(gerrs) > 0 {
		out.set("errors", gerrs)
		call.Outcome = "error"
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) reportReject(format string, a ...any) {
	if s.tb != nil && !s.allowRejects {
		s.tb.Errorf("lineartest: request rejected: "+format, a...)
	}
}

func (ex *execCtx) resolveRoot(s *Server, r resolver, f *ast.Field) (v any, err error) {
	args := ex.argMap(f)
	res, err := r(s, args)
	if err != nil {
		return nil, err
	}
	return ex.project(res, f.Definition.Type, f)
}

func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return &apiError{msg: err.Error(), code: "INTERNAL_SERVER_ERROR", typ: "internal error", status: 500}
}

// unimplemented reports something the fake cannot emulate.
func unimplemented(format string, a ...any) error {
	return &apiError{msg: "lineartest: " + fmt.Sprintf(format, a...), code: "FAKE_UNIMPLEMENTED", typ: "lineartest"}
}

// --- arguments -------------------------------------------------------------

// argMap resolves a field's arguments. An input-object field whose variable
// was not supplied is left out (gqlparser's ArgumentMap would make it nil,
// confusing "omitted" with "explicit null"), so updates touch only what was
// sent.
func (ex *execCtx) argMap(f *ast.Field) map[string]any {
	out := map[string]any{}
	if f.Definition == nil {
		return out
	}
	for _, def := range f.Definition.Arguments {
		a := f.Arguments.ForName(def.Name)
		if a == nil {
			if def.DefaultValue != nil {
				if v, err := def.DefaultValue.Value(nil); err == nil {
					out[def.Name] = v
				}
			}
			continue
		}
		if v, ok := ex.value(a.Value); ok {
			out[def.Name] = v
		}
	}
	return out
}

func (ex *execCtx) value(v *ast.Value) (any, bool) {
	if v == nil {
		return nil, false
	}
	switch v.Kind {
	case ast.Variable:
		x, ok := ex.vars[v.Raw]
		return x, ok
	case ast.ObjectValue:
		m := map[string]any{}
		for _, c := range v.Children {
			if x, ok := ex.value(c.Value); ok {
				m[c.Name] = x
			}
		}
		return m, true
	case ast.ListValue:
		l := []any{}
		for _, c := range v.Children {
			x, _ := ex.value(c.Value)
			l = append(l, x)
		}
		return l, true
	default:
		x, err := v.Value(nil)
		return x, err == nil
	}
}

// coerceVariables checks variable values strictly (gqlparser's
// VariableValues lets a JSON number pass as a String inside input objects
// and accepts numeric strings as Int) and normalises them: Int -> int64,
// Float -> float64, JSON numbers inside JSONObject -> float64. Deprecated
// input fields and enum values found in the values are appended to deps.
func coerceVariables(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any, deps *[]string) (map[string]any, error) {
	out := make(map[string]any, len(vars))
	for _, d := range op.VariableDefinitions {
		v, ok := vars[d.Variable]
		if !ok {
			continue
		}
		c, err := coerce(schema, d.Type, v, "$"+d.Variable, deps)
		if err != nil {
			return nil, err
		}
		out[d.Variable] = c
	}
	return out, nil
}

func coerce(schema *ast.Schema, t *ast.Type, v any, path string, deps *[]string) (any, error) {
	if v == nil {
		if t.NonNull {
			return nil, fmt.Errorf("%s: must not be null", path)
		}
		return nil, nil
	}
	if t.Elem != nil {
		l, ok := v.([]any)
		if !ok {
			l = []any{v} // a single value is coerced to a list
		}
		out := make([]any, len(l))
		for i, x := range l {
			c, err := coerce(schema, t.Elem, x, fmt.Sprintf("%s[%d]", path, i), deps)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	def := schema.Types[t.NamedType]
	if def == nil {
		return nil, fmt.Errorf("%s: unknown type %s", path, t.NamedType)
	}
	bad := func() error { return fmt.Errorf("%s: cannot use %s as %s", path, describe(v), t.NamedType) }
	switch def.Kind {
	case ast.Enum:
		str, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		ev := def.EnumValues.ForName(str)
		if ev == nil {
			return nil, fmt.Errorf("%s: %q is not a valid %s", path, str, def.Name)
		}
		if d := ev.Directives.ForName("deprecated"); d != nil {
			*deps = append(*deps, fmt.Sprintf("enum value %s.%s%s", def.Name, str, reason(d)))
		}
		return str, nil
	case ast.InputObject:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			fd := def.Fields.ForName(k)
			if fd == nil {
				return nil, fmt.Errorf("%s: unknown field %s.%s", path, def.Name, k)
			}
			if d := fd.Directives.ForName("deprecated"); d != nil {
				*deps = append(*deps, fmt.Sprintf("input field %s.%s%s", def.Name, k, reason(d)))
			}
			c, err := coerce(schema, fd.Type, x, path+"."+k, deps)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		for _, fd := range def.Fields {
			if _, ok := m[fd.Name]; !ok && fd.Type.NonNull && fd.DefaultValue == nil {
				return nil, fmt.Errorf("%s.%s: must be defined", path, fd.Name)
			}
		}
		return out, nil
	case ast.Scalar:
		switch t.NamedType {
		case "Int":
			n, ok := toNumber(v)
			if !ok || n != math.Trunc(n) || n > math.MaxInt32 || n < math.MinInt32 {
				return nil, bad()
			}
			return int64(n), nil
		case "Float":
			n, ok := toNumber(v)
			if !ok {
				return nil, bad()
			}
			return n, nil
		case "String":
			if _, ok := v.(string); !ok {
				return nil, bad()
			}
			return v, nil
		case "Boolean":
			if _, ok := v.(bool); !ok {
				return nil, bad()
			}
			return v, nil
		case "ID":
			switch x := v.(type) {
			case string:
				return x, nil
			case json.Number:
				if _, err := x.Int64(); err == nil {
					return x.String(), nil
				}
			case int64:
				return strconv.FormatInt(x, 10), nil
			}
			return nil, bad()
		case "JSONObject":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, bad()
			}
			return normalizeJSON(m), nil
		case "DateTime":
			str, ok := v.(string)
			if !ok {
				return nil, bad()
			}
			if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				return nil, fmt.Errorf("%s: %q is not an ISO 8601 DateTime", path, str)
			}
			return str, nil
		case "TimelessDate":
			str, ok := v.(string)
			if !ok {
				return nil, bad()
			}
			if _, err := time.Parse(time.DateOnly, str); err != nil {
				return nil, fmt.Errorf("%s: %q is not a YYYY-MM-DD TimelessDate", path, str)
			}
			return str, nil
		default:
			return normalizeJSON(v), nil
		}
	}
	return nil, fmt.Errorf("%s: %s is not an input type", path, t.NamedType)
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "string " + strconv.Quote(x)
	case json.Number:
		return "number " + x.String()
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// normalizeJSON turns json.Number into float64 (as encoding/json would).
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	}
	return v
}

// --- deprecation -----------------------------------------------------------

// deprecatedUses lists the deprecated fields, arguments, input fields (in
// literals) and enum values (in literals) an operation uses, including
// through fragments.
func deprecatedUses(schema *ast.Schema, doc *ast.QueryDocument, op *ast.OperationDefinition) []string {
	var out []string
	seen := map[string]bool{}
	var value func(v *ast.Value, t *ast.Type)
	value = func(v *ast.Value, t *ast.Type) {
		if v == nil || t == nil {
			return
		}
		switch v.Kind {
		case ast.ListValue:
			et := t
			if t.Elem != nil {
				et = t.Elem
			}
			for _, c := range v.Children {
				value(c.Value, et)
			}
		case ast.ObjectValue:
			def := schema.Types[t.Name()]
			if def == nil {
				return
			}
			for _, c := range v.Children {
				fd := def.Fields.ForName(c.Name)
				if fd == nil {
					continue
				}
				if d := fd.Directives.ForName("deprecated"); d != nil {
					out = append(out, fmt.Sprintf("input field %s.%s%s", def.Name, c.Name, reason(d)))
				}
				value(c.Value, fd.Type)
			}
		case ast.EnumValue:
			if def := schema.Types[t.Name()]; def != nil {
				if ev := def.EnumValues.ForName(v.Raw); ev != nil {
					if d := ev.Directives.ForName("deprecated"); d != nil {
						out = append(out, fmt.Sprintf("enum value %s.%s%s", def.Name, v.Raw, reason(d)))
					}
				}
			}
		}
	}
	var walk func(set ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Definition != nil && x.ObjectDefinition != nil {
					if d := x.Definition.Directives.ForName("deprecated"); d != nil {
						out = append(out, fmt.Sprintf("field %s.%s%s", x.ObjectDefinition.Name, x.Name, reason(d)))
					}
					for _, a := range x.Arguments {
						ad := x.Definition.Arguments.ForName(a.Name)
						if ad == nil {
							continue
						}
						if d := ad.Directives.ForName("deprecated"); d != nil {
							out = append(out, fmt.Sprintf("argument %s.%s(%s:)%s", x.ObjectDefinition.Name, x.Name, a.Name, reason(d)))
						}
						value(a.Value, ad.Type)
					}
				}
				walk(x.SelectionSet)
			case *ast.InlineFragment:
				walk(x.SelectionSet)
			case *ast.FragmentSpread:
				if !seen[x.Name] {
					seen[x.Name] = true
					if fr := doc.Fragments.ForName(x.Name); fr != nil {
						walk(fr.SelectionSet)
					}
				}
			}
		}
	}
	for _, vd := range op.VariableDefinitions {
		value(vd.DefaultValue, vd.Type)
	}
	walk(op.SelectionSet)
	return out
}

func reason(d *ast.Directive) string {
	if a := d.Arguments.ForName("reason"); a != nil && a.Value != nil {
		return " (" + a.Value.Raw + ")"
	}
	return ""
}

func dedupe(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range l {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// --- selection sets --------------------------------------------------------

// collectFields flattens fragments applying to typename and honours
// @skip / @include.
func (ex *execCtx) collectFields(set ast.SelectionSet, typename string) []*ast.Field {
	var out []*ast.Field
	for _, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			if ex.included(x.Directives) {
				out = append(out, x)
			}
		case *ast.InlineFragment:
			if ex.included(x.Directives) && (x.TypeCondition == "" || ex.applies(typename, x.TypeCondition)) {
				out = append(out, ex.collectFields(x.SelectionSet, typename)...)
			}
		case *ast.FragmentSpread:
			fr := ex.doc.Fragments.ForName(x.Name)
			if fr != nil && ex.included(x.Directives) && ex.applies(typename, fr.TypeCondition) {
				out = append(out, ex.collectFields(fr.SelectionSet, typename)...)
			}
		}
	}
	return out
}

func (ex *execCtx) included(ds ast.DirectiveList) bool {
	for _, d := range ds {
		if d.Name != "skip" && d.Name != "include" {
			continue
		}
		a := d.Arguments.ForName("if")
		if a == nil {
			continue
		}
		v, _ := ex.value(a.Value)
		b, _ := v.(bool)
		if (d.Name == "skip" && b) || (d.Name == "include" && !b) {
			return false
		}
	}
	return true
}

// applies reports whether a fragment on cond applies to concrete type typ.
func (ex *execCtx) applies(typ, cond string) bool {
	if cond == "" || cond == typ {
		return true
	}
	def := ex.schema.Types[typ]
	if def == nil {
		return false
	}
	for _, d := range ex.schema.GetImplements(def) {
		if d.Name == cond {
			return true
		}
	}
	if c := ex.schema.Types[cond]; c != nil && c.Kind == ast.Union {
		for _, t := range c.Types {
			if t == typ {
				return true
			}
		}
	}
	return false
}

// --- projection ------------------------------------------------------------

func (ex *execCtx) project(v any, t *ast.Type, f *ast.Field) (any, error) {
	where := f.Name
	if f.ObjectDefinition != nil {
		where = f.ObjectDefinition.Name + "." + f.Name
	}
	if o, ok := v.(obj); ok && o == nil {
		v = nil
	}
	if v == nil {
		if t.NonNull {
			return nil, unimplemented("non-null field %s resolved to null (fixture gap)", where)
		}
		return nil, nil
	}
	if t.Elem != nil {
		var items []any
		switch l := v.(type) {
		case []obj:
			for _, o := range l {
				items = append(items, o)
			}
		case []any:
			items = l
		case []string:
			for _, x := range l {
				items = append(items, x)
			}
		default:
			return nil, unimplemented("%s wants a list, the fixture has %T", where, v)
		}
		out := make([]any, 0, len(items))
		for _, it := range items {
			p, err := ex.project(it, t.Elem, f)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	def := ex.schema.Types[t.NamedType]
	switch def.Kind {
	case ast.Scalar, ast.Enum:
		return scalarOut(v, t.NamedType, where)
	}
	o, ok := v.(obj)
	if !ok {
		return nil, unimplemented("%s wants an object, the fixture has %T", where, v)
	}
	return ex.projectObj(o, f.SelectionSet)
}

func scalarOut(v any, typ, where string) (any, error) {
	if tm, ok := v.(time.Time); ok {
		if typ != "DateTime" {
			return nil, unimplemented("%s is %s, the fixture has a time", where, typ)
		}
		return tm.UTC().Format("2006-01-02T15:04:05.000Z"), nil
	}
	ok := true
	switch typ {
	case "String", "ID", "DateTime", "TimelessDate":
		_, ok = v.(string)
	case "Boolean":
		_, ok = v.(bool)
	case "Float", "Int":
		switch v.(type) {
		case float64, int, int64:
		default:
			ok = false
		}
	case "JSONObject":
		_, ok = v.(map[string]any)
	}
	if !ok {
		return nil, unimplemented("%s is %s, the fixture has %T", where, typ, v)
	}
	return v, nil
}

func (ex *execCtx) projectObj(o obj, set ast.SelectionSet) (*ordered, error) {
	typ, _ := o["__typename"].(string)
	out := newOrdered()
	for _, f := range ex.collectFields(set, typ) {
		if f.Name == "__typename" {
			out.set(f.Alias, typ)
			continue
		}
		raw, present := o[f.Name]
		if !present {
			return nil, unimplemented("the fake has no data for %s.%s (extend lineartest)", typ, f.Name)
		}
		if fn, ok := raw.(lazy); ok {
			var err error
			if raw, err = fn(ex.argMap(f)); err != nil {
				return nil, err
			}
		}
		p, err := ex.project(raw, f.Definition.Type, f)
		if err != nil {
			return nil, err
		}
		out.merge(f.Alias, p)
	}
	return out, nil
}

// --- complexity ------------------------------------------------------------

// cost estimates Linear's complexity score: 0.1 per property, 1 per object,
// a connection's nodes/edges multiplied by `first` (default 50).
func (ex *execCtx) cost(set ast.SelectionSet, typename string) float64 {
	c := 0.0
	for _, f := range ex.collectFields(set, typename) {
		if f.Name == "__typename" || f.Definition == nil {
			continue
		}
		named := ex.schema.Types[f.Definition.Type.Name()]
		if named == nil {
			continue
		}
		switch {
		case named.Kind == ast.Scalar || named.Kind == ast.Enum:
			c += 0.1
		case strings.HasSuffix(named.Name, "Connection"):
			n := 50.0
			if x, ok := toNumber(ex.argMap(f)["first"]); ok {
				n = x
			}
			for _, cf := range ex.collectFields(f.SelectionSet, named.Name) {
				if cf.Definition == nil {
					continue
				}
				inner := 1 + ex.cost(cf.SelectionSet, cf.Definition.Type.Name())
				if cf.Name == "nodes" || cf.Name == "edges" {
					inner *= n
				}
				c += inner
			}
		default:
			c += 1 + ex.cost(f.SelectionSet, named.Name)
		}
	}
	return c
}

// --- ordered JSON objects --------------------------------------------------

// ordered is a JSON object that keeps the selection order.
type ordered struct {
	keys []string
	vals map[string]any
}

func newOrdered() *ordered { return &ordered{vals: map[string]any{}} }

func (o *ordered) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// merge sets k, merging with an earlier value of the same response key
// (the same field selected twice with different sub-selections).
func (o *ordered) merge(k string, v any) {
	if old, ok := o.vals[k]; ok {
		o.vals[k] = mergeValues(old, v)
		return
	}
	o.set(k, v)
}

func mergeValues(a, b any) any {
	switch x := a.(type) {
	case *ordered:
		y, ok := b.(*ordered)
		if !ok {
			return b
		}
		for _, k := range y.keys {
			x.merge(k, y.vals[k])
		}
		return x
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return b
		}
		for i := range x {
			x[i] = mergeValues(x[i], y[i])
		}
		return x
	}
	return b
}

func (o *ordered) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
