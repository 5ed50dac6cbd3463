package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"

	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/internal/protocol"
)

// protocolCache is a project's parsed protocol kept in the vault's state
// folder (integrity.ProtocolCacheFile), keyed by the SHA-256 of the
// document it was parsed from and signed with the vault's key: an operation
// that needs the checklists' rules (an update ticking what it observed, a
// gate) reads a few hundred bytes of JSON instead of parsing markdown, whose
// first parse in a process costs more than the rest of the operation.
type protocolCache struct {
	Sum      string             `json:"sum"` // "sha256:<hex>" of the document
	Protocol *protocol.Protocol `json:"protocol"`
	MAC      string             `json:"mac"`
}

// parseProtocol parses the protocol document data (named name), through
// the project's protocol cache: the cached parse while it is of these very
// bytes and its signature checks, else a parse, kept for the next call. A
// cache that cannot be read or written costs a parse, nothing else.
//
// A Service that runs many operations (the MCP server, the daemon) keeps
// the last protocol it read in memory too (protocolMemo): the next call on
// the same bytes neither decodes nor verifies the cache again.
func (s *Service) parseProtocol(project, name string, data []byte) *protocol.Protocol {
	h := sha256.Sum256(append([]byte(name+"\x00"), data...))
	sum := "sha256:" + hex.EncodeToString(h[:])
	if p := s.memo.get(sum); p != nil {
		return p
	}
	p := s.readProtocol(project, name, data, sum)
	s.memo.put(sum, p)
	return p
}

// readProtocol is parseProtocol's read of the project's protocol cache file,
// or its parse of data (sum: the cache's key) written to that file.
func (s *Service) readProtocol(project, name string, data []byte, sum string) *protocol.Protocol {
	file := integrity.ProtocolCacheFile(project)
	if b, err := s.V.ReadState(file); err == nil {
		var c protocolCache
		if json.Unmarshal(b, &c) == nil && c.Sum == sum && c.Protocol != nil {
			mac := c.MAC
			c.MAC = ""
			if want, err := s.signJSON(c); err == nil && hmac.Equal([]byte(want), []byte(mac)) {
				return c.Protocol
			}
		}
	}
	p := protocol.Parse(s.MD, name, data)
	c := protocolCache{Sum: sum, Protocol: p}
	if mac, err := s.signJSON(c); err == nil {
		c.MAC = mac
		if b, err := json.Marshal(c); err == nil {
			_ = s.V.WriteState(file, b) // a cache: without it, the next call parses again
		}
	}
	return p
}

// protocolMemo is the protocol a Service read last, by the cache key
// (protocolCache.Sum) of the document it was read from. Safe for
// concurrent use; nil keeps nothing.
type protocolMemo struct {
	mu  sync.Mutex
	sum string
	p   *protocol.Protocol
}

// get returns a copy of the protocol kept for sum, or nil.
func (m *protocolMemo) get(sum string) *protocol.Protocol {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.p == nil || m.sum != sum {
		return nil
	}
	return cloneProtocol(m.p)
}

// put keeps a copy of p for sum.
func (m *protocolMemo) put(sum string, p *protocol.Protocol) {
	if m == nil || p == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sum, m.p = sum, cloneProtocol(p)
}

// cloneProtocol copies p's lists, so that a caller that changes the copy it
// was given changes nothing kept.
func cloneProtocol(p *protocol.Protocol) *protocol.Protocol {
	c := *p
	c.Start, c.End, c.Unphased = slices.Clone(p.Start), slices.Clone(p.End), slices.Clone(p.Unphased)
	return &c
}
