import CHearthGPIO
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which libgpiod the GPIO plugin uses on this machine, and what the kernel offers: what
/// `hearth doctor` reports.
///
/// The C shim links no libgpiod; it loads `libgpiod.so.3` (libgpiod 2.x, the v2 API: Debian 13,
/// Raspberry Pi OS Trixie) or else `libgpiod.so.2` (libgpiod 1.6, the v1 API: Debian 12,
/// Raspberry Pi OS Bookworm) on first use. `HEARTH_LIBGPIOD` names another library (a soname or
/// a path) to load instead.
///
/// ```swift
/// let library = GPIOLibrary.current
/// print(library.description)   // libgpiod 2.2.1 (v2 API, libgpiod.so.3)
/// ```
public struct GPIOLibrary: Sendable, Hashable, CustomStringConvertible {
    /// The API generation: 2 (libgpiod 2.x), 1 (libgpiod 1.x), or nil when none was found.
    public var api: Int?
    /// The library's version (`2.2.1`, `1.6.3`), empty when none was found.
    public var version: String
    /// The file it was loaded from, empty when none was found.
    public var path: String
    /// One line for a person: the version, API and soname, or why none was found and which
    /// package to install.
    public var description: String

    /// Whether inputs are debounced by the kernel (`debounce_period_us`, v2) rather than in software.
    public var hasKernelDebounce: Bool { api == 2 }

    /// The library this process loaded (loading it now if nothing has yet).
    public static var current: GPIOLibrary {
        let api = Int(hg_backend_load())
        return GPIOLibrary(
            api: api == 0 ? nil : api, version: String(cString: hg_backend_version()), path: String(cString: hg_backend_path()),
            description: String(cString: hg_backend_description()))
    }

    /// What the running kernel serves on its GPIO character devices (the first chip under `dev`
    /// that opens), e.g. `v2 uAPI and v1 uAPI (Linux 6.1.0-56-amd64, gpiochip0)`.
    public static func kernelUAPI(dev: String = "/dev") -> KernelUAPI {
        var uts = utsname()
        uname(&uts)
        let release = withUnsafeBytes(of: uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let chips = ((try? FileManager.default.contentsOfDirectory(atPath: dev)) ?? []).filter { $0.hasPrefix("gpiochip") }
            .sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
        var lastError: Int32 = ENOENT
        for chip in chips {
            let r = hg_kernel_uapi("\(dev)/\(chip)")
            if r > 0 { return KernelUAPI(kernel: release, chip: chip, v1: r & 1 != 0, v2: r & 2 != 0, error: nil) }
            // 0: it opened, but answered neither uAPI: not a GPIO character device.
            lastError = r == 0 ? ENOTTY : -r
        }
        let why = chips.isEmpty ? "no \(dev)/gpiochip* device" : "cannot open \(dev)/\(chips[0]): \(String(cString: strerror(lastError)))"
        return KernelUAPI(kernel: release, chip: nil, v1: false, v2: false, error: why)
    }

    /// What `hearth doctor` says about GPIO access below the chips: which libgpiod was found
    /// (version, v1/v2 API, file) and which uAPIs the kernel serves. A problem when no library
    /// is installed, or the kernel lacks the uAPI the library speaks.
    ///
    /// - Parameter dev: the folder with the GPIO character devices.
    /// - Returns: whether it is a problem, and the explanation for a person.
    public static func doctorReport(dev: String = "/dev") -> (isProblem: Bool, explanation: String) {
        let library = current
        let kernel = kernelUAPI(dev: dev)
        guard library.api != nil else { return (true, "\(library.description); kernel GPIO uAPI: \(kernel)") }
        let debounce = library.hasKernelDebounce ? "inputs are debounced by the kernel" : "inputs are debounced in software (the v1 API has no kernel debounce)"
        var text = "\(library.description) from \(library.path); kernel GPIO uAPI: \(kernel); \(debounce)"
        if kernel.error == nil, !kernel.serves(library) {
            text += ". This kernel lacks the v\(library.api ?? 0) uAPI that library needs: "
                + (library.api == 1 ? "install libgpiod3 (libgpiod 2, the v2 uAPI)" : "use a kernel of Linux 5.10 or later")
            return (true, text)
        }
        return (false, text)
    }

    /// The GPIO character-device uAPIs of the running kernel.
    public struct KernelUAPI: Sendable, Hashable, CustomStringConvertible {
        /// `uname -r`.
        public var kernel: String
        /// The chip that was asked, nil when none could be.
        public var chip: String?
        /// The v1 uAPI (libgpiod 1.x needs it; a kernel may leave it out since Linux 5.10).
        public var v1: Bool
        /// The v2 uAPI (Linux ≥ 5.10: debounce, per-line event clocks; libgpiod 2.x needs it).
        public var v2: Bool
        /// Why no chip could be asked.
        public var error: String?

        public var description: String {
            if let error { return "unknown (\(error); Linux \(kernel))" }
            let apis = [v2 ? "v2 uAPI" : nil, v1 ? "v1 uAPI" : nil].compactMap { $0 }
            return (apis.isEmpty ? "no GPIO uAPI" : apis.joined(separator: " and ")) + " (Linux \(kernel), \(chip ?? "?"))"
        }

        /// Whether `library` can work with this kernel.
        public func serves(_ library: GPIOLibrary) -> Bool {
            switch library.api {
            case 2: v2
            case 1: v1
            default: false
            }
        }
    }
}
