package lineartest

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
)

type resolver func(s *Server, args map[string]any) (any, error)

// Root fields the fake executes. Anything else is FAKE_UNIMPLEMENTED.

// queryResolvers returns the Query root fields the fake serves.
func queryResolvers() map[string]resolver {
	return map[string]resolver{
		"viewer":          func(s *Server, _ map[string]any) (any, error) { return s.userObj(s.st.viewer), nil },
		"organization":    func(s *Server, _ map[string]any) (any, error) { return s.orgObj(), nil },
		"rateLimitStatus": (*Server).rateLimitStatus,
		"issue":           (*Server).issueQuery,
		"comment":         (*Server).commentQuery,
		"team":            (*Server).teamQuery,
		"teams":           (*Server).teamsQuery,
		"workflowState":   (*Server).workflowStateQuery,
		"workflowStates":  (*Server).workflowStatesQuery,
		"issueLabel":      (*Server).issueLabelQuery,
		"issueLabels":     (*Server).issueLabelsQuery,
		"attachment":      (*Server).attachmentQuery,
	}
}

// mutationResolvers returns the Mutation root fields the fake serves.
func mutationResolvers() map[string]resolver {
	return map[string]resolver{
		"commentCreate":     (*Server).commentCreate,
		"commentUpdate":     (*Server).commentUpdate,
		"commentDelete":     (*Server).commentDelete,
		"issueUpdate":       (*Server).issueUpdate,
		"issueLabelCreate":  (*Server).issueLabelCreate,
		"attachmentCreate":  (*Server).attachmentCreate,
		"attachmentLinkURL": (*Server).attachmentLinkURL,
	}
}

// --- errors Linear gives ---------------------------------------------------

func notFound(kind string) error {
	return &apiError{msg: "Entity not found: " + kind, code: "INPUT_ERROR", typ: "invalid input", status: 400,
		user: "Could not find referenced " + kind + "."}
}

func inputError(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	return &apiError{msg: "Argument Validation Error: " + msg, code: "INPUT_ERROR", typ: "invalid input", status: 400, user: msg}
}

func forbidden(msg string) error {
	return &apiError{msg: msg, code: "FORBIDDEN", typ: "forbidden", status: 403, user: msg}
}

// checkKeys fails loudly on input fields the fake does not implement.
func checkKeys(m map[string]any, typ string, supported ...string) error {
	for k := range m {
		ok := false
		for _, s := range supported {
			ok = ok || s == k
		}
		if !ok {
			return unimplemented("%s.%s is not implemented by the fake", typ, k)
		}
	}
	return nil
}

func str(v any) string { s, _ := v.(string); return s }

func strPtr(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func isUUIDv4(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.Version() == 4 && u.Variant() == uuid.RFC4122 && len(id) == 36 && strings.ToLower(id) == id
}

// --- objects ---------------------------------------------------------------

func ref(f func() any) lazy { return func(map[string]any) (any, error) { return f(), nil } }

func orNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func (s *Server) orgObj() obj {
	st := s.st
	return obj{"__typename": "Organization", "id": st.orgID, "name": "Test Workspace", "urlKey": "test",
		"createdAt": st.orgCreatedAt, "updatedAt": st.orgCreatedAt, "archivedAt": nil, "logoUrl": nil,
		"userCount": 2, "createdIssueCount": len(st.issues),
		"teams": s.connection("TeamConnection", "TeamFilter", func(f map[string]any) ([]obj, error) { return s.teamNodes(f) })}
}

func (s *Server) userObj(u *user) obj {
	if u == nil {
		return nil
	}
	return obj{"__typename": "User", "id": u.id, "name": u.name, "displayName": u.displayName, "email": u.email,
		"active": true, "admin": false, "app": false, "guest": false, "isMe": u == s.st.viewer,
		"avatarUrl": nil, "description": nil, "timezone": "UTC", "title": nil, "archivedAt": nil,
		"initials": strings.ToUpper(u.name[:1]), "url": "https://linear.app/test/profiles/" + u.displayName,
		"createdAt": u.createdAt, "updatedAt": u.createdAt,
		"organization": ref(func() any { return s.orgObj() })}
}

func (s *Server) teamObj(t *team) obj {
	if t == nil {
		return nil
	}
	return obj{"__typename": "Team", "id": t.id, "key": t.key, "name": t.name, "displayName": t.name,
		"description": nil, "color": "#5e6ad2", "icon": nil, "timezone": "UTC", "archivedAt": nil,
		"createdAt": t.createdAt, "updatedAt": t.createdAt, "triageEnabled": false, "cyclesEnabled": false,
		"organization":      ref(func() any { return s.orgObj() }),
		"defaultIssueState": ref(func() any { return s.stateObj(t.states[1]) }),
		"states": s.connection("WorkflowStateConnection", "WorkflowStateFilter", func(f map[string]any) ([]obj, error) {
			var out []obj
			for _, st := range t.states {
				if ok, err := s.matchState(st, f); err != nil {
					return nil, err
				} else if ok {
					out = append(out, s.stateObj(st))
				}
			}
			return out, nil
		}),
		"labels": s.connection("IssueLabelConnection", "IssueLabelFilter", func(f map[string]any) ([]obj, error) {
			var out []obj
			for _, l := range s.st.labels {
				if l.team != t {
					continue
				}
				if ok, err := s.matchLabel(l, f); err != nil {
					return nil, err
				} else if ok {
					out = append(out, s.labelObj(l))
				}
			}
			return out, nil
		}),
	}
}

func (s *Server) stateObj(st *state) obj {
	return obj{"__typename": "WorkflowState", "id": st.id, "name": st.name, "type": st.typ, "color": st.color,
		"position": st.position, "description": nil, "archivedAt": nil, "createdAt": st.createdAt, "updatedAt": st.createdAt,
		"team": ref(func() any { return s.teamObj(st.team) })}
}

var priorityLabels = []string{"No priority", "Urgent", "High", "Medium", "Low"}

func (s *Server) issueObj(i *issue) obj {
	return obj{"__typename": "Issue", "id": i.id, "identifier": i.identifier, "number": float64(i.number),
		"title": i.title, "description": orNil(i.description), "estimate": orNil(i.estimate),
		"priority": float64(i.priority), "priorityLabel": priorityLabels[i.priority], "url": i.url(),
		"branchName": strings.ToLower(i.identifier), "createdAt": i.createdAt, "updatedAt": i.updatedAt,
		"archivedAt": nil, "canceledAt": nil, "completedAt": nil, "startedAt": nil, "dueDate": nil,
		"trashed": nil, "assignee": nil, "parent": nil, "sortOrder": 0.0, "prioritySortOrder": 0.0,
		"previousIdentifiers": []string{}, "labelIds": append([]string{}, i.labelIDs...),
		"creator": ref(func() any { return s.userObj(s.st.viewer) }),
		"state":   ref(func() any { return s.stateObj(i.state) }),
		"team":    ref(func() any { return s.teamObj(i.team) }),
		"labels": s.connection("IssueLabelConnection", "IssueLabelFilter", func(f map[string]any) ([]obj, error) {
			var out []obj
			for _, id := range i.labelIDs {
				l := s.st.findLabel(id)
				if l == nil {
					continue
				}
				if ok, err := s.matchLabel(l, f); err != nil {
					return nil, err
				} else if ok {
					out = append(out, s.labelObj(l))
				}
			}
			return out, nil
		}),
		"comments": s.connection("CommentConnection", "CommentFilter", func(f map[string]any) ([]obj, error) {
			var out []obj
			for _, c := range s.st.comments {
				if c.issue != i {
					continue
				}
				if ok, err := s.matchComment(c, f); err != nil {
					return nil, err
				} else if ok {
					out = append(out, s.commentObj(c))
				}
			}
			return out, nil
		}),
		"attachments": s.connection("AttachmentConnection", "AttachmentFilter", func(map[string]any) ([]obj, error) {
			var out []obj
			for _, a := range s.st.attachments {
				if a.issue == i {
					out = append(out, s.attachmentObj(a))
				}
			}
			return out, nil
		}),
	}
}

func (s *Server) commentObj(c *comment) obj {
	var edited any
	if c.editedAt != nil {
		edited = *c.editedAt
	}
	return obj{"__typename": "Comment", "id": c.id, "body": c.body, "url": c.url(),
		"createdAt": c.createdAt, "updatedAt": c.updatedAt, "editedAt": edited, "archivedAt": nil, "resolvedAt": nil,
		"issueId": c.issue.id, "parentId": nil, "parent": nil, "quotedText": nil, "hideInLinear": false,
		"reactionData": map[string]any{},
		"issue":        ref(func() any { return s.issueObj(c.issue) }),
		"user":         ref(func() any { return s.userObj(c.user) })}
}

func (s *Server) labelObj(l *label) obj {
	return obj{"__typename": "IssueLabel", "id": l.id, "name": l.name, "color": l.color,
		"description": orNil(l.description), "isGroup": false, "parent": nil, "archivedAt": nil, "retiredAt": nil,
		"createdAt": l.createdAt, "updatedAt": l.updatedAt,
		"creator": ref(func() any { return s.userObj(s.st.viewer) }),
		"team": ref(func() any {
			if l.team == nil {
				return nil
			}
			return s.teamObj(l.team)
		})}
}

func (s *Server) attachmentObj(a *attachment) obj {
	return obj{"__typename": "Attachment", "id": a.id, "url": a.url, "title": a.title, "subtitle": orNil(a.subtitle),
		"metadata": cloneMap(a.metadata), "groupBySource": false, "sourceType": nil, "source": nil, "bodyData": nil,
		"archivedAt": nil, "createdAt": a.createdAt, "updatedAt": a.updatedAt,
		"creator": ref(func() any { return s.userObj(s.st.viewer) }),
		"issue":   ref(func() any { return s.issueObj(a.issue) })}
}

// connection builds a Relay connection field over the nodes (in creation
// order) matching args.filter; supports first/after (cursor = node id),
// nodes, edges and pageInfo. orderBy updatedAt sorts most recent first
// (an assumption); last/before fail loudly.
func (s *Server) connection(typename, filterType string, nodes func(filter map[string]any) ([]obj, error)) lazy {
	return func(args map[string]any) (any, error) {
		if args["last"] != nil || args["before"] != nil {
			return nil, unimplemented("last/before pagination on %s is not implemented by the fake", typename)
		}
		f, _ := args["filter"].(map[string]any)
		if err := checkFilter(filterType, f); err != nil {
			return nil, err
		}
		all, err := nodes(f)
		if err != nil {
			return nil, err
		}
		if ob, _ := args["orderBy"].(string); ob == "updatedAt" {
			sort.SliceStable(all, func(i, j int) bool {
				a, _ := all[i]["updatedAt"].(time.Time)
				b, _ := all[j]["updatedAt"].(time.Time)
				return a.After(b)
			})
		}
		start := 0
		if after, ok := args["after"].(string); ok && after != "" {
			start = -1
			for i, n := range all {
				if n["id"] == after {
					start = i + 1
				}
			}
			if start < 0 {
				return nil, inputError("invalid cursor %q", after)
			}
		}
		first := 50
		if n, ok := toNumber(args["first"]); ok {
			if n < 0 {
				return nil, inputError("first must be non-negative")
			}
			first = int(n)
		}
		end := min(start+first, len(all))
		page := all[start:end]
		edgeType := strings.TrimSuffix(typename, "Connection") + "Edge"
		edges := make([]obj, len(page))
		for i, n := range page {
			edges[i] = obj{"__typename": edgeType, "node": n, "cursor": n["id"]}
		}
		var startCursor, endCursor any
		if len(page) > 0 {
			startCursor, endCursor = page[0]["id"], page[len(page)-1]["id"]
		}
		return obj{"__typename": typename, "nodes": page, "edges": edges,
			"pageInfo": obj{"__typename": "PageInfo", "hasNextPage": end < len(all), "hasPreviousPage": start > 0,
				"startCursor": startCursor, "endCursor": endCursor}}, nil
	}
}

// --- filters ---------------------------------------------------------------

// Filter keys the fake evaluates, per filter input type; every comparator
// type listed in supportedComparators is implemented in full.
var supportedFilters = map[string][]string{
	"TeamFilter":          {"id", "key", "name", "description"},
	"NullableTeamFilter":  {"id", "key", "name", "description", "null"},
	"UserFilter":          {"id", "name", "displayName", "email", "isMe", "active", "admin", "app"},
	"NullableUserFilter":  {"id", "name", "displayName", "email", "isMe", "active", "admin", "app", "null"},
	"WorkflowStateFilter": {"id", "name", "type", "position", "team"},
	"IssueLabelFilter":    {"id", "name", "isGroup", "team"},
	"IssueFilter":         {"id", "title", "number", "team", "state"},
	"NullableIssueFilter": {"id", "title", "number", "team", "state", "null"},
	"CommentFilter":       {"id", "body", "user", "issue"},
}

var supportedComparators = map[string]bool{
	"StringComparator": true, "NullableStringComparator": true, "IDComparator": true, "IssueIDComparator": true,
	"BooleanComparator": true, "NumberComparator": true, "NullableNumberComparator": true,
}

// checkFilter rejects filter keys the fake does not evaluate, whatever the
// data (a filter over an empty list must fail as loudly as over a full one).
func checkFilter(typ string, f map[string]any) error {
	if len(f) == 0 {
		return nil
	}
	schema, _ := Schema()
	def := schema.Types[typ]
	keys, ok := supportedFilters[typ]
	if def == nil || !ok {
		return unimplemented("filters of type %s are not implemented by the fake", typ)
	}
	for k, v := range f {
		if v == nil {
			continue
		}
		if k == "and" || k == "or" {
			l, _ := v.([]any)
			for _, sub := range l {
				m, _ := sub.(map[string]any)
				if err := checkFilter(typ, m); err != nil {
					return err
				}
			}
			continue
		}
		found := false
		for _, s := range keys {
			found = found || s == k
		}
		if !found {
			return unimplemented("filter %s.%s is not implemented by the fake", typ, k)
		}
		fd := def.Fields.ForName(k)
		if fd == nil || k == "null" {
			continue
		}
		sub := fd.Type.Name()
		if supportedComparators[sub] {
			continue
		}
		m, _ := v.(map[string]any)
		if err := checkFilter(sub, m); err != nil {
			return err
		}
	}
	return nil
}

type matcher func(cmp any) (bool, error)

// matchFilter evaluates a filter object: its keys are ANDed; "and"/"or"
// take lists of the same filter type. Unknown keys fail loudly.
func matchFilter(typ string, f map[string]any, fields map[string]matcher) (bool, error) {
	self := func(sub any) (bool, error) {
		m, _ := sub.(map[string]any)
		return matchFilter(typ, m, fields)
	}
	for k, v := range f {
		if v == nil {
			continue
		}
		switch k {
		case "and", "or":
			l, _ := v.([]any)
			anyOK := false
			for _, sub := range l {
				ok, err := self(sub)
				if err != nil {
					return false, err
				}
				if k == "and" && !ok {
					return false, nil
				}
				anyOK = anyOK || ok
			}
			if k == "or" && len(l) > 0 && !anyOK {
				return false, nil
			}
		default:
			m, ok := fields[k]
			if !ok {
				return false, unimplemented("filter %s.%s is not implemented by the fake", typ, k)
			}
			ok, err := m(v)
			if err != nil || !ok {
				return false, err
			}
		}
	}
	return true, nil
}

// stringCmp implements StringComparator / NullableStringComparator.
func stringCmp(val *string) matcher {
	return func(c any) (bool, error) {
		m, _ := c.(map[string]any)
		for op, arg := range m {
			if arg == nil {
				continue
			}
			if op == "null" {
				if (val == nil) != arg.(bool) {
					return false, nil
				}
				continue
			}
			if val == nil {
				return false, nil
			}
			v, lv := *val, strings.ToLower(*val)
			a, la := str(arg), strings.ToLower(str(arg))
			var ok bool
			switch op {
			case "eq":
				ok = v == a
			case "neq":
				ok = v != a
			case "eqIgnoreCase":
				ok = lv == la
			case "neqIgnoreCase":
				ok = lv != la
			case "contains":
				ok = strings.Contains(v, a)
			case "notContains":
				ok = !strings.Contains(v, a)
			case "containsIgnoreCase", "containsIgnoreCaseAndAccent":
				ok = strings.Contains(lv, la)
			case "notContainsIgnoreCase":
				ok = !strings.Contains(lv, la)
			case "startsWith":
				ok = strings.HasPrefix(v, a)
			case "startsWithIgnoreCase":
				ok = strings.HasPrefix(lv, la)
			case "notStartsWith":
				ok = !strings.HasPrefix(v, a)
			case "endsWith":
				ok = strings.HasSuffix(v, a)
			case "notEndsWith":
				ok = !strings.HasSuffix(v, a)
			case "in", "nin":
				found := false
				for _, x := range arg.([]any) {
					found = found || str(x) == v
				}
				ok = found == (op == "in")
			default:
				return false, unimplemented("string comparator %q is not implemented by the fake", op)
			}
			if !ok {
				return false, nil
			}
		}
		return true, nil
	}
}

func strCmp(v string) matcher { return stringCmp(&v) }

// idCmp implements IDComparator (eq, neq, in, nin).
func idCmp(v string) matcher {
	return func(c any) (bool, error) {
		m, _ := c.(map[string]any)
		for op, arg := range m {
			if arg == nil {
				continue
			}
			switch op {
			case "eq", "neq", "in", "nin":
			default:
				return false, unimplemented("ID comparator %q is not implemented by the fake", op)
			}
		}
		return stringCmp(&v)(c)
	}
}

func boolCmp(v bool) matcher {
	return func(c any) (bool, error) {
		m, _ := c.(map[string]any)
		for op, arg := range m {
			if arg == nil {
				continue
			}
			switch op {
			case "eq":
				if v != arg.(bool) {
					return false, nil
				}
			case "neq":
				if v == arg.(bool) {
					return false, nil
				}
			default:
				return false, unimplemented("boolean comparator %q is not implemented by the fake", op)
			}
		}
		return true, nil
	}
}

func numberCmp(v float64) matcher {
	return func(c any) (bool, error) {
		m, _ := c.(map[string]any)
		for op, arg := range m {
			if arg == nil {
				continue
			}
			var ok bool
			a, _ := toNumber(arg)
			switch op {
			case "eq":
				ok = v == a
			case "neq":
				ok = v != a
			case "lt":
				ok = v < a
			case "lte":
				ok = v <= a
			case "gt":
				ok = v > a
			case "gte":
				ok = v >= a
			case "in", "nin":
				found := false
				for _, x := range arg.([]any) {
					n, _ := toNumber(x)
					found = found || n == v
				}
				ok = found == (op == "in")
			default:
				return false, unimplemented("number comparator %q is not implemented by the fake", op)
			}
			if !ok {
				return false, nil
			}
		}
		return true, nil
	}
}

// nested matches a (possibly nullable) related entity: {null: true} matches
// a missing one; any other key on a missing one does not match.
func nested(isNil bool, match func(map[string]any) (bool, error)) matcher {
	return func(c any) (bool, error) {
		m, _ := c.(map[string]any)
		rest := map[string]any{}
		for k, v := range m {
			if k == "null" {
				if v != nil && v.(bool) != isNil {
					return false, nil
				}
				continue
			}
			rest[k] = v
		}
		if isNil {
			return len(rest) == 0, nil
		}
		return match(rest)
	}
}

func (s *Server) matchTeam(t *team, f map[string]any) (bool, error) {
	return matchFilter("TeamFilter", f, map[string]matcher{
		"id":          idCmp(t.id),
		"key":         strCmp(t.key),
		"name":        strCmp(t.name),
		"description": stringCmp(nil),
	})
}

func (s *Server) matchUser(u *user, f map[string]any) (bool, error) {
	return matchFilter("UserFilter", f, map[string]matcher{
		"id":          idCmp(u.id),
		"name":        strCmp(u.name),
		"displayName": strCmp(u.displayName),
		"email":       strCmp(u.email),
		"isMe":        boolCmp(u == s.st.viewer),
		"active":      boolCmp(true),
		"admin":       boolCmp(false),
		"app":         boolCmp(false),
	})
}

func (s *Server) matchState(st *state, f map[string]any) (bool, error) {
	return matchFilter("WorkflowStateFilter", f, map[string]matcher{
		"id":       idCmp(st.id),
		"name":     strCmp(st.name),
		"type":     strCmp(st.typ),
		"position": numberCmp(st.position),
		"team":     nested(false, func(m map[string]any) (bool, error) { return s.matchTeam(st.team, m) }),
	})
}

func (s *Server) matchLabel(l *label, f map[string]any) (bool, error) {
	return matchFilter("IssueLabelFilter", f, map[string]matcher{
		"id":      idCmp(l.id),
		"name":    strCmp(l.name),
		"isGroup": boolCmp(false),
		"team":    nested(l.team == nil, func(m map[string]any) (bool, error) { return s.matchTeam(l.team, m) }),
	})
}

func (s *Server) matchIssue(i *issue, f map[string]any) (bool, error) {
	return matchFilter("IssueFilter", f, map[string]matcher{
		"id":     idCmp(i.id),
		"title":  strCmp(i.title),
		"number": numberCmp(float64(i.number)),
		"team":   nested(false, func(m map[string]any) (bool, error) { return s.matchTeam(i.team, m) }),
		"state":  nested(false, func(m map[string]any) (bool, error) { return s.matchState(i.state, m) }),
	})
}

func (s *Server) matchComment(c *comment, f map[string]any) (bool, error) {
	return matchFilter("CommentFilter", f, map[string]matcher{
		"id":    idCmp(c.id),
		"body":  strCmp(c.body),
		"user":  nested(c.user == nil, func(m map[string]any) (bool, error) { return s.matchUser(c.user, m) }),
		"issue": nested(false, func(m map[string]any) (bool, error) { return s.matchIssue(c.issue, m) }),
	})
}

// --- queries ---------------------------------------------------------------

func (s *Server) rateLimitStatus(_ map[string]any) (any, error) {
	reset := float64(s.windowStart.Add(time.Hour).UnixMilli())
	return obj{"__typename": "RateLimitPayload", "identifier": "lineartest", "kind": "api key", "limits": []obj{
		{"__typename": "RateLimitResultPayload", "type": "requestLimit", "allowedAmount": float64(RequestLimit),
			"remainingAmount": float64(s.remaining()), "requestedAmount": 1.0, "period": 3600000.0, "reset": reset},
		{"__typename": "RateLimitResultPayload", "type": "complexityLimit", "allowedAmount": float64(ComplexityLimit),
			"remainingAmount": float64(ComplexityLimit), "requestedAmount": 1.0, "period": 3600000.0, "reset": reset},
	}}, nil
}

func (s *Server) issueQuery(a map[string]any) (any, error) {
	i := s.st.findIssue(str(a["id"]))
	if i == nil {
		return nil, notFound("Issue")
	}
	return s.issueObj(i), nil
}

func (s *Server) commentQuery(a map[string]any) (any, error) {
	if a["hash"] != nil {
		return nil, unimplemented("comment(hash:) is not implemented by the fake")
	}
	if a["id"] == nil {
		return nil, inputError("id or hash is required")
	}
	c := s.st.findComment(str(a["id"]))
	if c == nil {
		return nil, notFound("Comment")
	}
	return s.commentObj(c), nil
}

func (s *Server) teamQuery(a map[string]any) (any, error) {
	t := s.st.findTeam(str(a["id"]))
	if t == nil {
		return nil, notFound("Team")
	}
	return s.teamObj(t), nil
}

func (s *Server) teamNodes(f map[string]any) ([]obj, error) {
	var out []obj
	for _, t := range s.st.teams {
		if ok, err := s.matchTeam(t, f); err != nil {
			return nil, err
		} else if ok {
			out = append(out, s.teamObj(t))
		}
	}
	return out, nil
}

func (s *Server) teamsQuery(a map[string]any) (any, error) {
	return s.connection("TeamConnection", "TeamFilter", s.teamNodes)(a)
}

func (s *Server) workflowStateQuery(a map[string]any) (any, error) {
	st := s.st.findState(str(a["id"]))
	if st == nil {
		return nil, notFound("WorkflowState")
	}
	return s.stateObj(st), nil
}

func (s *Server) workflowStatesQuery(a map[string]any) (any, error) {
	return s.connection("WorkflowStateConnection", "WorkflowStateFilter", func(f map[string]any) ([]obj, error) {
		var out []obj
		for _, t := range s.st.teams {
			for _, st := range t.states {
				if ok, err := s.matchState(st, f); err != nil {
					return nil, err
				} else if ok {
					out = append(out, s.stateObj(st))
				}
			}
		}
		return out, nil
	})(a)
}

func (s *Server) issueLabelQuery(a map[string]any) (any, error) {
	l := s.st.findLabel(str(a["id"]))
	if l == nil {
		return nil, notFound("IssueLabel")
	}
	return s.labelObj(l), nil
}

func (s *Server) issueLabelsQuery(a map[string]any) (any, error) {
	return s.connection("IssueLabelConnection", "IssueLabelFilter", func(f map[string]any) ([]obj, error) {
		var out []obj
		for _, l := range s.st.labels {
			if ok, err := s.matchLabel(l, f); err != nil {
				return nil, err
			} else if ok {
				out = append(out, s.labelObj(l))
			}
		}
		return out, nil
	})(a)
}

func (s *Server) attachmentQuery(a map[string]any) (any, error) {
	at := s.st.findAttachment(str(a["id"]))
	if at == nil {
		return nil, notFound("Attachment")
	}
	return s.attachmentObj(at), nil
}

// --- mutations -------------------------------------------------------------

func (s *Server) payload(typename, field string, v any) obj {
	return obj{"__typename": typename, "success": true, "lastSyncId": s.st.nextSync(), field: v}
}

// clientID validates an optional client-chosen id ("UUID v4 format").
func clientID(in map[string]any) (string, bool, error) {
	v, ok := in["id"]
	if !ok || v == nil {
		return newID(), false, nil
	}
	id := str(v)
	if !isUUIDv4(id) {
		return "", false, inputError("id must be a UUID v4, got %q", id)
	}
	return id, true, nil
}

func duplicateID(kind, id string) error {
	return inputError("a %s with id %s already exists", kind, id)
}

func (s *Server) commentCreate(a map[string]any) (any, error) {
	in, _ := a["input"].(map[string]any)
	if err := checkKeys(in, "CommentCreateInput", "id", "issueId", "body", "doNotSubscribeToIssue"); err != nil {
		return nil, err
	}
	if in["issueId"] == nil {
		return nil, unimplemented("commentCreate without issueId (comments on projects, documents, ...) is not implemented by the fake")
	}
	if in["body"] == nil {
		return nil, inputError("body is required")
	}
	id, chosen, err := clientID(in)
	if err != nil {
		return nil, err
	}
	if chosen {
		if c := s.st.findComment(id); c != nil {
			if s.dupCreateSucceed {
				return s.payload("CommentPayload", "comment", s.commentObj(c)), nil
			}
			return nil, duplicateID("comment", id)
		}
	}
	i := s.st.findIssue(str(in["issueId"]))
	if i == nil {
		return nil, notFound("Issue")
	}
	now := s.st.now()
	c := &comment{id: id, body: str(in["body"]), issue: i, user: s.st.viewer, createdAt: now, updatedAt: now}
	s.st.comments = append(s.st.comments, c)
	return s.payload("CommentPayload", "comment", s.commentObj(c)), nil
}

func (s *Server) commentUpdate(a map[string]any) (any, error) {
	in, _ := a["input"].(map[string]any)
	if err := checkKeys(in, "CommentUpdateInput", "body", "doNotSubscribeToIssue"); err != nil {
		return nil, err
	}
	c := s.st.findComment(str(a["id"]))
	if c == nil {
		return nil, notFound("Comment")
	}
	if c.user != s.st.viewer {
		return nil, forbidden("You can only edit your own comments.")
	}
	if b, ok := in["body"]; ok {
		if b == nil {
			return nil, inputError("body must not be null")
		}
		c.body = str(b)
	}
	now := s.st.now()
	c.updatedAt = now
	if skip, _ := a["skipEditedAt"].(bool); !skip {
		c.editedAt = &now
	}
	return s.payload("CommentPayload", "comment", s.commentObj(c)), nil
}

func (s *Server) commentDelete(a map[string]any) (any, error) {
	id := str(a["id"])
	c := s.st.findComment(id)
	if c == nil {
		return nil, notFound("Comment")
	}
	if c.user != s.st.viewer {
		return nil, forbidden("You can only delete your own comments.")
	}
	s.st.deleteComment(id)
	return obj{"__typename": "DeletePayload", "success": true, "lastSyncId": s.st.nextSync(), "entityId": id}, nil
}

func (s *Server) labelsFor(i *issue, v any) ([]string, error) {
	l, _ := v.([]any)
	var ids []string
	for _, x := range l {
		lb := s.st.findLabel(str(x))
		if lb == nil {
			return nil, notFound("IssueLabel")
		}
		if lb.team != nil && lb.team != i.team {
			return nil, inputError("label %s belongs to team %s, not to the issue's team %s", lb.name, lb.team.key, i.team.key)
		}
		ids = append(ids, lb.id)
	}
	return ids, nil
}

func addUnique(ids []string, add ...string) []string {
	for _, a := range add {
		dup := false
		for _, have := range ids {
			dup = dup || have == a
		}
		if !dup {
			ids = append(ids, a)
		}
	}
	return ids
}

func (s *Server) issueUpdate(a map[string]any) (any, error) {
	in, _ := a["input"].(map[string]any)
	if err := checkKeys(in, "IssueUpdateInput", "title", "description", "estimate", "priority", "stateId",
		"labelIds", "addedLabelIds", "removedLabelIds"); err != nil {
		return nil, err
	}
	i := s.st.findIssue(str(a["id"]))
	if i == nil {
		return nil, notFound("Issue")
	}
	// Validate everything first so that a failed update changes nothing.
	next := *i
	next.labelIDs = append([]string{}, i.labelIDs...)
	if v, ok := in["title"]; ok {
		if v == nil || str(v) == "" {
			return nil, inputError("title must not be empty")
		}
		next.title = str(v)
	}
	if v, ok := in["description"]; ok {
		next.description = strPtr(v)
	}
	if v, ok := in["estimate"]; ok {
		if v == nil {
			next.estimate = nil
		} else {
			n, _ := toNumber(v)
			next.estimate = &n
		}
	}
	if v, ok := in["priority"]; ok {
		n, _ := toNumber(v)
		if v == nil || n < 0 || n > 4 {
			return nil, inputError("priority must be 0..4")
		}
		next.priority = int(n)
	}
	if v, ok := in["stateId"]; ok {
		st := s.st.findState(str(v))
		if st == nil {
			return nil, notFound("WorkflowState")
		}
		if st.team != i.team {
			return nil, inputError("workflow state %s belongs to team %s, not to the issue's team %s", st.name, st.team.key, i.team.key)
		}
		next.state = st
	}
	if v, ok := in["labelIds"]; ok {
		ids, err := s.labelsFor(i, v)
		if err != nil {
			return nil, err
		}
		next.labelIDs = addUnique([]string{}, ids...)
	}
	if v, ok := in["addedLabelIds"]; ok {
		ids, err := s.labelsFor(i, v)
		if err != nil {
			return nil, err
		}
		next.labelIDs = addUnique(next.labelIDs, ids...)
	}
	if v, ok := in["removedLabelIds"]; ok {
		l, _ := v.([]any)
		kept := []string{}
		for _, have := range next.labelIDs {
			drop := false
			for _, x := range l {
				drop = drop || str(x) == have
			}
			if !drop {
				kept = append(kept, have)
			}
		}
		next.labelIDs = kept
	}
	next.updatedAt = s.st.now()
	*i = next
	return s.payload("IssuePayload", "issue", s.issueObj(i)), nil
}

func (s *Server) issueLabelCreate(a map[string]any) (any, error) {
	in, _ := a["input"].(map[string]any)
	if err := checkKeys(in, "IssueLabelCreateInput", "id", "name", "teamId", "color", "description"); err != nil {
		return nil, err
	}
	if r, _ := a["replaceTeamLabels"].(bool); r {
		return nil, unimplemented("issueLabelCreate(replaceTeamLabels: true) is not implemented by the fake")
	}
	id, chosen, err := clientID(in)
	if err != nil {
		return nil, err
	}
	if chosen {
		if l := s.st.findLabel(id); l != nil {
			if s.dupCreateSucceed {
				return s.payload("IssueLabelPayload", "issueLabel", s.labelObj(l)), nil
			}
			return nil, duplicateID("label", id)
		}
	}
	name := strings.TrimSpace(str(in["name"]))
	if name == "" {
		return nil, inputError("name must not be empty")
	}
	var t *team
	if v := in["teamId"]; v != nil {
		if t = s.st.findTeam(str(v)); t == nil {
			return nil, notFound("Team")
		}
	}
	for _, l := range s.st.labels {
		if strings.EqualFold(l.name, name) && (l.team == t || l.team == nil || t == nil) {
			return nil, inputError("a label named %q already exists", l.name)
		}
	}
	now := s.st.now()
	l := &label{id: id, name: name, color: "#bec2c8", team: t, description: strPtr(in["description"]), createdAt: now, updatedAt: now}
	if c := str(in["color"]); c != "" {
		l.color = c
	}
	s.st.labels = append(s.st.labels, l)
	return s.payload("IssueLabelPayload", "issueLabel", s.labelObj(l)), nil
}

func validURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

// upsertAttachment creates an attachment or, if the issue already has one
// with the same url, updates it (attachmentCreate is an upsert on url +
// issueId).
func (s *Server) upsertAttachment(in map[string]any) (any, error) {
	if !validURL(str(in["url"])) {
		return nil, inputError("url must be a valid http(s) URL")
	}
	i := s.st.findIssue(str(in["issueId"]))
	if i == nil {
		return nil, notFound("Issue")
	}
	var att *attachment
	for _, x := range s.st.attachments {
		if x.issue == i && x.url == str(in["url"]) {
			att = x
		}
	}
	now := s.st.now()
	if att == nil {
		id, chosen, err := clientID(in)
		if err != nil {
			return nil, err
		}
		if chosen {
			if x := s.st.findAttachment(id); x != nil {
				if s.dupCreateSucceed {
					return s.payload("AttachmentPayload", "attachment", s.attachmentObj(x)), nil
				}
				return nil, duplicateID("attachment", id)
			}
		}
		att = &attachment{id: id, url: str(in["url"]), issue: i, metadata: map[string]any{}, createdAt: now}
		s.st.attachments = append(s.st.attachments, att)
	}
	if v, ok := in["title"]; ok && v != nil {
		att.title = str(v)
	}
	if att.title == "" {
		att.title = att.url
	}
	if v, ok := in["subtitle"]; ok {
		att.subtitle = strPtr(v)
	}
	if v, ok := in["metadata"]; ok {
		m, _ := v.(map[string]any)
		att.metadata = cloneMap(m)
	}
	att.updatedAt = now
	return s.payload("AttachmentPayload", "attachment", s.attachmentObj(att)), nil
}

func (s *Server) attachmentCreate(a map[string]any) (any, error) {
	in, _ := a["input"].(map[string]any)
	if err := checkKeys(in, "AttachmentCreateInput", "id", "issueId", "url", "title", "subtitle", "metadata"); err != nil {
		return nil, err
	}
	return s.upsertAttachment(in)
}

func (s *Server) attachmentLinkURL(a map[string]any) (any, error) {
	if err := checkKeys(a, "Mutation.attachmentLinkURL", "id", "issueId", "url", "title"); err != nil {
		return nil, err
	}
	return s.upsertAttachment(a)
}
