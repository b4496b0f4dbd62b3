"""Starts the CHIP Python controller (home-assistant-chip-core) the way every harness here needs
it: no BLE, a fresh certificate authority and fabric admin in STORAGE, one controller.
Needs a writable /data (paths compiled into the wheel)."""
import os


def start(storage: str, fabric_id: int):
    """Returns (controller, stop): call stop() once, after the controller is no longer used."""
    controller, _, stop = start_with_authorities(storage, fabric_id)
    return controller, stop


def start_with_authorities(storage: str, fabric_id: int):
    """As start(), plus new_controller(fabric_id, node_id): another controller on a fabric of its
    own (a second ecosystem), from a new certificate authority in the same stack."""
    import chip.native
    import chip.CertificateAuthority
    from chip.ChipStack import ChipStack

    chip.native.Init(999)  # an adapter ID that does not exist: no BLE
    stack = ChipStack(persistentStoragePath=os.path.join(storage, "chip.json"))
    manager = chip.CertificateAuthority.CertificateAuthorityManager(stack, stack.GetStorageManager())
    controllers = []

    def new_controller(fabric: int, node_id: int = 112233):
        admin = manager.NewCertificateAuthority().NewFabricAdmin(vendorId=0xFFF1, fabricId=fabric)
        controllers.append(admin.NewController(nodeId=node_id, paaTrustStorePath=storage))
        return controllers[-1]

    controller = new_controller(fabric_id)

    def stop():
        for c in controllers:
            c.Shutdown()
        manager.Shutdown()
        stack.Shutdown()

    return controller, new_controller, stop
