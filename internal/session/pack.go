package session

import "github.com/sessionvault/sessionvault/internal/vault"

// packLooseObjects has git pack the vault's loose objects when there are
// more than git lets stand (vault.PackLooseObjects), at a session's start
// and end, without waiting for it: what fails is a warning of res.
func (s *Service) packLooseObjects(res *vault.Result) {
	if _, err := s.V.PackLooseObjects(false); err != nil {
		res.Warnings = append(res.Warnings, "the vault's loose git objects were not packed ("+err.Error()+"); `"+s.GitCommand("gc")+"` packs them")
	}
}
