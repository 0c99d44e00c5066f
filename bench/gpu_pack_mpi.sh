#!/usr/bin/env bash
# Adds Debian's OpenMPI to a packed GPU build (.gpu, from bench/gpu_pack.sh), for `mpirun ... tissue sweep`
# on the GPU machine, which has no MPI: mpirun (orterun), orted and ompi_info, the MPI and PMIx libraries,
# their plugin folders and help files, relocated under .gpu/mpi (OPAL_PREFIX, PMIX_INSTALL_PREFIX), and
# every system library they load into .gpu/lib. Appends the environment to .gpu/env.sh: after sourcing it,
# `mpirun -np 3 .gpu/build/tools/tissue sweep ...` runs as root on one host over shared memory.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -d .gpu/build ] || { echo "run bench/gpu_pack.sh first" >&2; exit 1; }
command -v orterun >/dev/null || { echo "OpenMPI is not installed (tools/setup-debian.sh)" >&2; exit 1; }
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
prefix=.gpu/mpi
rm -rf "$prefix"
mkdir -p "$prefix/bin" "$prefix/lib/$arch/openmpi/lib" "$prefix/lib/$arch/pmix2/lib" "$prefix/share"
# the same layout below the prefix as below /usr, which is what OPAL_PREFIX relocates
cp -L /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info "$prefix/bin/"
ln -sf orterun "$prefix/bin/mpirun"
cp -rL "/usr/lib/$arch/openmpi/lib/openmpi3" "$prefix/lib/$arch/openmpi/lib/"
cp -rL "/usr/lib/$arch/pmix2/lib/pmix" "$prefix/lib/$arch/pmix2/lib/"
cp -rL "/usr/lib/$arch/pmix2/share" "$prefix/lib/$arch/pmix2/"
cp -rL /usr/share/openmpi "$prefix/share/"
[ -d /usr/share/pmix ] && cp -rL /usr/share/pmix "$prefix/share/"
# the plugins' and programs' libraries (libmpi, libopen-rte, libpmix, hwloc, libevent, ...)
find "$prefix" -type f \( -name '*.so' -o -perm -u+x \) | while read -r f; do
  file "$f" | grep -q ELF || continue
  strip --strip-unneeded "$f" 2>/dev/null || true
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcuda.so*|libgcc_s.so*|libstdc++.so*|libgomp.so*) continue ;;
  esac
  [ -e ".gpu/lib/$(basename "$lib")" ] || cp -L "$lib" .gpu/lib/
done
cat >> .gpu/env.sh <<'ENV'
# OpenMPI (bench/gpu_pack_mpi.sh): relocated, as root, one host, shared memory only
export OPAL_PREFIX="$here/mpi"
export PMIX_INSTALL_PREFIX="$here/mpi/lib/x86_64-linux-gnu/pmix2"
export PATH="$here/mpi/bin:$PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_osc=^ucx OMPI_MCA_mtl=^ofi,psm2 OMPI_MCA_plm_rsh_agent=false
ENV
du -sh "$prefix" .gpu | awk '{print $2 ": " $1}'
