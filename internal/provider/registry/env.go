package registry

// CommandEnv returns the environment variables a child command gets for a
// traceforge server at addr (host:port): each provider's base-URL variable
// pointing at the server, with the version prefix its SDKs expect
// (Descriptor.BaseURLFor; DESIGN §6, §12.2), and its further base-URL
// variables (Descriptor.MoreBaseURLEnv), then TRACEFORGE_URL.
func CommandEnv(addr string) []string {
	root := "http://" + addr
	env := make([]string, 0, len(providers)+1)
	for _, d := range providers {
		env = append(env, d.BaseURLEnv+"="+d.BaseURLFor(root))
		for _, v := range d.MoreBaseURLEnv {
			env = append(env, v.Name+"="+root+v.Path)
		}
	}
	return append(env, "TRACEFORGE_URL="+root)
}

// Exports returns the lines server mode prints, one per line: CommandEnv
// as shell exports.
func Exports(addr string) []string {
	env := CommandEnv(addr)
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = "export " + kv
	}
	return out
}
