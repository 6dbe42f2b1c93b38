package app

// WaitingPosts returns how many posts of s wait for the unit of work of
// the posts before them (ADR 0098).
func WaitingPosts(s *Service) int { return s.posts.Waiting() }
