// A test fixture: a shared library that is not a Hearth plugin (it exports none of the entry
// points). The host must refuse it by name.
public func notAPlugin() -> Int { 42 }
