package secret_test

// The provider registry registers every provider's folder and key rules
// when it is initialised (DESIGN §13.1); this layer names no provider, so
// its tests link the registry as the binary does.
import _ "github.com/traceforge/traceforge/internal/provider/registry"
