import MatterTLV

/// Expands attribute paths against a data model and reads them into AttributeReportIBs
/// (Matter Core Specification 8.4.3.2 "Read", 8.9 "Wildcard paths"): a concrete path that
/// does not exist or is not allowed yields a status; a wildcard path silently skips what does
/// not exist or is not allowed.
struct AttributeReader {
    let model: any MatterDataModel
    let access: any AccessChecker
    let subject: Subject

    /// The concrete paths one request path names, or the status for a concrete path that fails
    /// before its value is read.
    func expand(_ path: AttributePath) -> [Result<ConcreteAttributePath, AttributeStatus>] {
        if !path.isWildcard, let e = path.endpoint, let c = path.cluster, let a = path.attribute {
            let concrete = ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)
            if let status = existence(concrete) { return [.failure(AttributeStatus(path: concrete.path, status: StatusIB(status)))] }
            return [.success(concrete)]
        }
        var out: [Result<ConcreteAttributePath, AttributeStatus>] = []
        let endpoints = path.endpoint.map { [$0] } ?? model.endpoints()
        for e in endpoints {
            guard let clusters = model.clusters(on: e) else { continue }
            for c in clusters where path.cluster == nil || path.cluster == c {
                let cp = ConcreteClusterPath(endpoint: e, cluster: c)
                guard let info = model.clusterInfo(cp), access.allows(subject, cp, .view) else { continue }
                for a in info.attributes + GlobalAttribute.all where path.attribute == nil || path.attribute == a {
                    out.append(.success(ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)))
                }
            }
        }
        return out
    }

    /// UNSUPPORTED_ENDPOINT, UNSUPPORTED_CLUSTER, UNSUPPORTED_ACCESS or UNSUPPORTED_ATTRIBUTE (in
    /// that order of checks, 8.4.3.2) for a concrete path; nil when it exists and is allowed.
    func existence(_ p: ConcreteAttributePath, privilege: Privilege = .view) -> InteractionStatus? {
        guard let clusters = model.clusters(on: p.endpoint) else { return .unsupportedEndpoint }
        guard clusters.contains(p.cluster), let info = model.clusterInfo(p.clusterPath) else { return .unsupportedCluster }
        guard access.allows(subject, p.clusterPath, privilege) else { return .unsupportedAccess }
        guard info.attributes.contains(p.attribute) || GlobalAttribute.all.contains(p.attribute) else { return .unsupportedAttribute }
        return nil
    }

    /// Reads one concrete, existing path: data with the cluster's data version, or a status.
    func read(_ p: ConcreteAttributePath) -> AttributeReport {
        guard let info = model.clusterInfo(p.clusterPath) else {
            return .status(AttributeStatus(path: p.path, status: StatusIB(.unsupportedCluster)))
        }
        let value: Result<TLVElement, StatusIB>
        switch p.attribute {
        case GlobalAttribute.generatedCommandList: value = .success(idArray(info.generatedCommands))
        case GlobalAttribute.acceptedCommandList: value = .success(idArray(info.acceptedCommands))
        case GlobalAttribute.eventList: value = .success(idArray(info.events))
        case GlobalAttribute.attributeList: value = .success(idArray(info.attributes + GlobalAttribute.all))
        case GlobalAttribute.featureMap: value = .success(TLVElement(.unsigned(UInt64(info.featureMap))))
        case GlobalAttribute.clusterRevision: value = .success(TLVElement(.unsigned(UInt64(info.revision))))
        default: value = model.read(p, subject: subject)
        }
        switch value {
        case .success(let data): return .data(AttributeData(path: p.path, data: data, dataVersion: info.dataVersion))
        case .failure(let status): return .status(AttributeStatus(path: p.path, status: status))
        }
    }

    /// Every report for a list of request paths, in request order, skipping clusters whose
    /// data version a filter says the client already has (10.6.3).
    func reports(for paths: [AttributePath], filters: [DataVersionFilter] = []) -> [AttributeReport] {
        var out: [AttributeReport] = []
        var seen = Set<ConcreteAttributePath>()
        for path in paths {
            for item in expand(path) {
                switch item {
                case .failure(let status): out.append(.status(status))
                case .success(let p):
                    guard seen.insert(p).inserted else { continue }
                    if let info = model.clusterInfo(p.clusterPath), filters.contains(where: { f in
                        f.path.endpoint == p.endpoint && f.path.cluster == p.cluster && f.dataVersion == info.dataVersion
                    }) { continue }
                    out.append(read(p))
                }
            }
        }
        return out
    }

    /// The data versions of the clusters the paths cover (what a subscription watches).
    func clusterVersions(for paths: [AttributePath]) -> [ConcreteClusterPath: UInt32] {
        var out: [ConcreteClusterPath: UInt32] = [:]
        for path in paths {
            for case .success(let p) in expand(path) where out[p.clusterPath] == nil {
                out[p.clusterPath] = model.clusterInfo(p.clusterPath)?.dataVersion
            }
        }
        return out
    }
}

extension AttributeReader {
    /// The statuses of the request's concrete event paths (endpoint, cluster and event given)
    /// that do not exist or may not be viewed, checked in the order of 8.4.3.2; wildcard paths
    /// never yield one.
    func eventStatuses(for paths: [EventPath]) -> [EventStatus] {
        paths.compactMap { path in
            guard let e = path.endpoint, let c = path.cluster, let ev = path.event else { return nil }
            let status: InteractionStatus
            let cp = ConcreteClusterPath(endpoint: e, cluster: c)
            if let clusters = model.clusters(on: e) {
                if !clusters.contains(c) { status = .unsupportedCluster }
                else if !access.allows(subject, cp, .view) { status = .unsupportedAccess }
                else if !(model.clusterInfo(cp)?.events.contains(ev) ?? false) { status = .unsupportedEvent }
                else { return nil }
            } else {
                status = .unsupportedEndpoint
            }
            return EventStatus(path: EventPath(endpoint: e, cluster: c, event: ev), status: StatusIB(status))
        }
    }

    /// The kept events (numbered at least `min`) that the paths name and the subject may view
    /// (7.14: reading an event needs View on its cluster), each once, in number order.
    func events(for paths: [EventPath], from min: UInt64) -> [EventRecord] {
        guard !paths.isEmpty else { return [] }
        var allowed: [ConcreteClusterPath: Bool] = [:]
        return model.events(from: min).filter { r in
            guard paths.contains(where: { r.matches($0) }) else { return false }
            let cp = ConcreteClusterPath(endpoint: r.endpoint, cluster: r.cluster)
            if let known = allowed[cp] { return known }
            let ok = model.clusters(on: r.endpoint)?.contains(r.cluster) == true && access.allows(subject, cp, .view)
            allowed[cp] = ok
            return ok
        }
    }
}

private func idArray(_ ids: [UInt32]) -> TLVElement {
    .array(ids.map { TLVElement(.unsigned(UInt64($0))) })
}
