"""Has the CHIP Python controller's certificate authority (home-assistant-chip-core) issue
operational certificates for Hearth nodes: for each NAME, reads WORKDIR/NAME.nocsr (NOCSR
elements TLV, hex, made by `matter-test-responder case-csr`) and writes the chain the
controller's IssueNOCChain returns, in Matter TLV form, as hex: WORKDIR/NAME.noc, NAME.rcac,
NAME.icac (when the CA uses one) and WORKDIR/ipk (the epoch IPK).

Usage: case_ca.py STORAGE_DIR WORKDIR NAME=NODE_ID...
Prints 'ISSUED NAME ...' per node and exits 0; 'ISSUE FAILED <error>' and exits 1 otherwise.
Needs a writable /data (paths compiled into the wheel).
"""
import asyncio
import os
import sys


async def main() -> int:
    storage, workdir, nodes = sys.argv[1], sys.argv[2], sys.argv[3:]
    import chip.clusters as Clusters
    from chip_controller import start

    controller, stop = start(storage, fabric_id=0x2026)
    ok = True
    try:
        for item in nodes:
            name, node_id = item.split("=")
            with open(os.path.join(workdir, name + ".nocsr")) as f:
                elements = bytes.fromhex(f.read().strip())
            csr = Clusters.OperationalCredentials.Commands.CSRResponse(NOCSRElements=elements, attestationSignature=b"")
            chain = await asyncio.wait_for(controller.IssueNOCChain(csr, int(node_id, 0)), timeout=20)
            if chain.nocBytes is None or chain.rcacBytes is None or chain.ipkBytes is None:
                raise RuntimeError(f"the controller issued no chain for {name}")
            files = {"noc": chain.nocBytes, "rcac": chain.rcacBytes}
            if chain.icacBytes:
                files["icac"] = chain.icacBytes
            for suffix, data in files.items():
                with open(os.path.join(workdir, f"{name}.{suffix}"), "w") as f:
                    f.write(data.hex())
            with open(os.path.join(workdir, "ipk"), "w") as f:
                f.write(chain.ipkBytes.hex())
            print(f"ISSUED {name} node={node_id} noc={len(chain.nocBytes)} icac={len(chain.icacBytes or b'')} "
                  f"rcac={len(chain.rcacBytes)} ipk={len(chain.ipkBytes)}", flush=True)
        # The controller's own view of its fabric, for the Swift side to agree with.
        print(f"CONTROLLER fabric={controller.GetFabricIdInternal():x} compressedFabric={controller.GetCompressedFabricId():x}",
              flush=True)
    except Exception as error:  # the controller raises ChipStackError and friends
        print(f"ISSUE FAILED {error!r}", flush=True)
        ok = False
    finally:
        stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
