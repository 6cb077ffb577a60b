# Cross build for 64-bit ARM (Raspberry Pi 3/4/5 on a 64-bit OS) with Debian's cross toolchain,
# no sysroot: Debian multiarch puts the target's libraries in /usr/lib/aarch64-linux-gnu
# (libgtest-dev:arm64, ...), the cross libc and libstdc++ in /usr/aarch64-linux-gnu, and
# architecture-independent headers and CMake packages (tl-expected, nlohmann-json, asio) in
# /usr/include and /usr/share/cmake, which the cross compiler already searches.
# Tests run under qemu-user through CMAKE_CROSSCOMPILING_EMULATOR (ctest and gtest discovery).
# Packages: scripts/setup.sh aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(MOAT_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${MOAT_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${MOAT_CROSS_TRIPLE}-g++)
# Makes find_* look in <prefix>/lib/aarch64-linux-gnu (and never in the host's x86_64 dirs).
set(CMAKE_LIBRARY_ARCHITECTURE ${MOAT_CROSS_TRIPLE})

set(CMAKE_FIND_ROOT_PATH /usr/${MOAT_CROSS_TRIPLE})
set(CMAKE_LIBRARY_PATH /usr/lib/${MOAT_CROSS_TRIPLE})
# Programs (python3, qemu, ...) run on the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Target first (/usr/aarch64-linux-gnu), then the multiarch host prefix (/usr with lib/<arch>).
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config: only the target's .pc files and the architecture-independent ones.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${MOAT_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/${MOAT_CROSS_TRIPLE})
