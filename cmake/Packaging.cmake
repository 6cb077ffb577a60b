# The Debian package: install rules for the packaged tree and CPack's DEB generator. Included
# from the top-level CMakeLists.txt after src/ (it needs the dnsmoat target) and after
# cmake/ManPage.cmake. From a build dir of the release preset (amd64) or the aarch64 preset
# (arm64; the pi5 preset's -mcpu=cortex-a76 binary would not run on a Pi 3 or 4):
#
#   cmake --build build/release --target dnsmoat_package_files   # binary, config, changelog, man
#   cd build/release && cpack -G DEB                              # -> dnsmoat_<version>_amd64.deb
#
# (scripts/test.sh --only package does both for both architectures and checks the result.)
#
#   /usr/bin/dnsmoat                      stripped (CPACK_STRIP_FILES; the cross strip for arm64)
#   /etc/dnsmoat/dnsmoat.toml             conffile: config/dnsmoat.toml on port 53, lists in /etc
#   /etc/dnsmoat/{blocklist,allowlist}.txt conffiles
#   /lib/systemd/system/dnsmoat.{service,socket}
#   /usr/share/man/man8/dnsmoat.8.gz      from cmake/ManPage.cmake, when present
#   /usr/share/doc/dnsmoat/               copyright, changelog.gz, third-party notices, the Pi guide
# Maintainer scripts and conffiles: cmake/debian/. Depends: dpkg-shlibdeps (it reads the arm64
# binary too, with the :arm64 libraries of scripts/setup.sh aarch64) plus what it cannot see.
#
# The install rules describe the Debian layout (absolute /etc and /lib paths, ExecStart=
# /usr/bin/dnsmoat in the unit): `cmake --install` is meant with --prefix /usr, as CPack does.

set(MOAT_PACKAGE_DIR "${CMAKE_BINARY_DIR}/package")
set(MOAT_PACKAGE_MAINTAINER "dnsmoat developers <dev@dnsmoat.invalid>")

# --- files generated at build time ----------------------------------------------------------------
add_custom_command(
    OUTPUT "${MOAT_PACKAGE_DIR}/dnsmoat.toml"
    COMMAND ${CMAKE_COMMAND} "-DINPUT=${PROJECT_SOURCE_DIR}/config/dnsmoat.toml"
            "-DOUTPUT=${MOAT_PACKAGE_DIR}/dnsmoat.toml"
            -P "${PROJECT_SOURCE_DIR}/cmake/debian/packaged-config.cmake"
    DEPENDS "${PROJECT_SOURCE_DIR}/config/dnsmoat.toml"
            "${PROJECT_SOURCE_DIR}/cmake/debian/packaged-config.cmake"
    COMMENT "Writing the packaged config (port 53, lists in /etc/dnsmoat)"
    VERBATIM)

# changelog.gz: Debian wants one in every package's doc dir; dnsmoat's history is its git log.
find_package(Git QUIET)
set(MOAT_PACKAGE_COMMIT "unknown")
set(MOAT_PACKAGE_DATE "")
if(GIT_FOUND)
    execute_process(COMMAND "${GIT_EXECUTABLE}" log -1 --format=%h%n%cD
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
        OUTPUT_VARIABLE _moat_git OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE _moat_git_rc ERROR_QUIET)
    if(_moat_git_rc EQUAL 0 AND _moat_git MATCHES "^([0-9a-f]+)\n(.+)$")
        set(MOAT_PACKAGE_COMMIT "${CMAKE_MATCH_1}")
        set(MOAT_PACKAGE_DATE "${CMAKE_MATCH_2}")
    endif()
endif()
if(MOAT_PACKAGE_DATE STREQUAL "")
    string(TIMESTAMP MOAT_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${MOAT_PACKAGE_MAINTAINER}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in" "${MOAT_PACKAGE_DIR}/changelog"
    @ONLY)
add_custom_command(
    OUTPUT "${MOAT_PACKAGE_DIR}/changelog.gz"
    COMMAND gzip -9nkf changelog
    DEPENDS "${MOAT_PACKAGE_DIR}/changelog"
    WORKING_DIRECTORY "${MOAT_PACKAGE_DIR}"
    COMMENT "Compressing the package changelog"
    VERBATIM)

# copyright: LICENSE in Debian's machine-readable format (every line of the licence indented,
# blank lines as " .").
file(READ "${PROJECT_SOURCE_DIR}/LICENSE" _moat_license)
string(REGEX MATCH "Copyright \\(c\\) ([^\n]+)" _moat_match "${_moat_license}")
set(MOAT_COPYRIGHT "${CMAKE_MATCH_1}")
string(REGEX REPLACE "^MIT License\n+" "" _moat_license "${_moat_license}")
string(STRIP "${_moat_license}" _moat_license)
string(REPLACE "\n\n" "\n.\n" _moat_license "${_moat_license}")
string(REPLACE "\n" "\n " MOAT_LICENSE_TEXT " ${_moat_license}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/debian/copyright.in" "${MOAT_PACKAGE_DIR}/copyright"
    @ONLY)

# Everything `cpack` installs must exist first: the release and aarch64 build presets build only
# some targets, so the package stage builds this one. Custom targets of the top directory are
# cmake/ManPage.cmake's (the man page): built before packaging too.
add_custom_target(dnsmoat_package_files
    DEPENDS "${MOAT_PACKAGE_DIR}/dnsmoat.toml" "${MOAT_PACKAGE_DIR}/changelog.gz")
add_dependencies(dnsmoat_package_files dnsmoat)
get_property(_moat_top_targets DIRECTORY "${PROJECT_SOURCE_DIR}" PROPERTY BUILDSYSTEM_TARGETS)
foreach(_t IN LISTS _moat_top_targets)
    get_target_property(_type ${_t} TYPE)
    if(_type STREQUAL "UTILITY" AND NOT _t STREQUAL "dnsmoat_package_files")
        add_dependencies(dnsmoat_package_files ${_t})
    endif()
endforeach()

# --- install rules (the binary's own is in src/app/CMakeLists.txt: bin/dnsmoat) --------------------
# The config holds the dashboard's password hash: never world-readable; postinst gives it to
# root:dnsmoat 0660 in a root:dnsmoat 0770 directory (cmake/debian/postinst says why).
install(FILES "${MOAT_PACKAGE_DIR}/dnsmoat.toml"
    DESTINATION /etc/dnsmoat
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ)
install(FILES "${PROJECT_SOURCE_DIR}/config/blocklist.txt" "${PROJECT_SOURCE_DIR}/config/allowlist.txt"
    DESTINATION /etc/dnsmoat)
# /lib, not /usr/lib: Debian 12 packages keep units there (the merged-/usr moratorium).
install(FILES "${PROJECT_SOURCE_DIR}/config/systemd/dnsmoat.service"
              "${PROJECT_SOURCE_DIR}/config/systemd/dnsmoat.socket"
    DESTINATION /lib/systemd/system)
install(FILES "${MOAT_PACKAGE_DIR}/copyright" "${MOAT_PACKAGE_DIR}/changelog.gz"
    DESTINATION share/doc/dnsmoat)
# postinst's hint on a taken port 53 points here (the guide is written in docs/).
install(FILES "${PROJECT_SOURCE_DIR}/docs/install-raspberry-pi.md"
    DESTINATION share/doc/dnsmoat OPTIONAL)

# The notices of code inside the binary (see copyright), from the -dev packages that built it.
set(_moat_notices
    re2:libre2-dev sqlite:libsqlite3-dev argon2:libargon2-dev nghttp2:libnghttp2-dev
    asio:libasio-dev nlohmann-json:nlohmann-json3-dev tomlplusplus:libtomlplusplus-dev
    cli11:libcli11-dev expected:libexpected-dev spdlog:libspdlog-dev fmt:libfmt-dev)
foreach(_notice IN LISTS _moat_notices)
    string(REPLACE ":" ";" _pair "${_notice}")
    list(GET _pair 0 _name)
    list(GET _pair 1 _pkg)
    set(_file "/usr/share/doc/${_pkg}/copyright")
    if(EXISTS "${_file}")
        install(FILES "${_file}" DESTINATION share/doc/dnsmoat/third-party RENAME "${_name}")
    else()
        message(WARNING "dnsmoat: ${_file} is missing; the package lacks the ${_name} notice")
    endif()
endforeach()

# --- CPack: DEB ---------------------------------------------------------------------------------
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(MOAT_DEB_ARCH arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(MOAT_DEB_ARCH amd64)
else()
    execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE MOAT_DEB_ARCH
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dnsmoat)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "The dnsmoat developers")
set(CPACK_PACKAGE_CONTACT "${MOAT_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "network-wide DNS sinkhole (ad and tracker blocker)")
set(CPACK_PACKAGE_DESCRIPTION "\
dnsmoat answers DNS for every device on the network and blocks ads, trackers and malware
domains from blocklists (hosts, domain, AdBlock and regex lists, downloaded and refreshed by
itself), forwarding the rest to upstream resolvers over UDP, TCP, DNS over TLS or DNS over
HTTPS. It serves plain DNS, DNS over TLS and DNS over HTTPS, caches answers, keeps a searchable
SQLite query log, and has a built-in web dashboard and Prometheus metrics.
The service listens on port 53; its config is /etc/dnsmoat/dnsmoat.toml.")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "${MOAT_DEB_ARCH}")
set(CPACK_DEBIAN_FILE_NAME "dnsmoat_${PROJECT_VERSION}_${MOAT_DEB_ARCH}.deb")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# Shared libraries the binary links: found by dpkg-shlibdeps. What it cannot see: libcurl4 is
# dlopen()ed by the list fetcher (CURLOPT_PROTOCOLS_STR needs 7.85); postinst creates the user
# with adduser, or useradd (passwd) where adduser is missing.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.85.0), adduser | passwd")
# Runs without systemd too (`dnsmoat run` drops to the dnsmoat user itself); the CA store is
# for HTTPS list downloads and encrypted upstreams.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd, ca-certificates")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/cmake/debian/conffiles"
    "${PROJECT_SOURCE_DIR}/cmake/debian/postinst"
    "${PROJECT_SOURCE_DIR}/cmake/debian/prerm"
    "${PROJECT_SOURCE_DIR}/cmake/debian/postrm")
# Scripts 0755, conffiles 0644, whatever the checkout's modes.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
