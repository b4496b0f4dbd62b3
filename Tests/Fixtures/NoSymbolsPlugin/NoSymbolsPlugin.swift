// A test fixture: a shared library that is not a Hearth plugin (it exports none of the entry
// points). The host must refuse it by name.
public func notAPlugin() -> Int { 42 }

// Marks this library as a test fixture: hearthd's folder scan passes it by (tests load it on purpose).
@_cdecl("hearth_plugin_test_fixture")
public func hearthPluginTestFixture() {}
