"""Starts the CHIP Python controller (home-assistant-chip-core) the way every harness here needs
it: no BLE, a fresh certificate authority and fabric admin in STORAGE, one controller.
Needs a writable /data (paths compiled into the wheel)."""
import os


def start(storage: str, fabric_id: int):
    """Returns (controller, stop): call stop() once, after the controller is no longer used."""
    import chip.native
    import chip.CertificateAuthority
    from chip.ChipStack import ChipStack

    chip.native.Init(999)  # an adapter ID that does not exist: no BLE
    stack = ChipStack(persistentStoragePath=os.path.join(storage, "chip.json"))
    manager = chip.CertificateAuthority.CertificateAuthorityManager(stack, stack.GetStorageManager())
    authority = manager.NewCertificateAuthority()
    admin = authority.NewFabricAdmin(vendorId=0xFFF1, fabricId=fabric_id)
    controller = admin.NewController(nodeId=112233, paaTrustStorePath=storage)

    def stop():
        controller.Shutdown()
        manager.Shutdown()
        stack.Shutdown()

    return controller, stop
