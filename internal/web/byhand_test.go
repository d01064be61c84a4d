package web

// forgetByHand drops what the server remembers of by-hand chats and open
// chats, as a restart would.
func (s *Server) forgetByHand() {
	s.byHand.mu.Lock()
	s.byHand.loaded, s.byHand.m = false, nil
	s.byHand.mu.Unlock()
	s.mu.Lock()
	s.chats = map[string]*chatState{}
	s.mu.Unlock()
}
