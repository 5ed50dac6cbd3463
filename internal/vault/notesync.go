package vault

// endSyncs waits for the note fsyncs the operation started (w.syncs), if
// any, and ends their window: rounds after it fsync before they return. It
// returns their first error.
func (w *writer) endSyncs() error {
	if w.syncs == nil {
		return nil
	}
	err := w.syncs.Wait()
	w.syncs = nil
	return err
}
