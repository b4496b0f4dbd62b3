public import HomeModel

extension HearthDatabase {
    /// The daemon's database: Hearth's own tables and every store hearthd keeps beside them
    /// (access, exposure, automations). hearthd and its maintenance subcommands (`backup`,
    /// `restore`, `restore-on-start`) open the file the same way, so the daemon's own tables are
    /// never taken for a newer Hearth's.
    ///
    /// - Throws: ``HomeError`` naming the file, as ``init(path:extraMigrations:)``.
    public static func daemon(path: String) throws(HomeError) -> HearthDatabase {
        try HearthDatabase(path: path) { migrator in
            AccessStore.registerMigrations(in: &migrator)
            ExposureStateStore.registerMigrations(in: &migrator)
            AutomationStateStore.registerMigrations(in: &migrator)
            MatterEndpointStore.registerMigrations(in: &migrator)
        }
    }
}
