package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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
func (s *Service) parseProtocol(project, name string, data []byte) *protocol.Protocol {
	h := sha256.Sum256(append([]byte(name+"\x00"), data...))
	sum := "sha256:" + hex.EncodeToString(h[:])
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
