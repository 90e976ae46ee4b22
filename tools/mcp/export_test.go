package mcp

// PID returns the pid of server's stdio child, 0 when it has none running.
func (m *Manager) PID(server string) int {
	s := m.servers[server]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return 0
	}
	return s.conn.pid
}
