# Writes the config file the Debian package installs as /etc/dnsmoat/dnsmoat.toml: the example
# config/dnsmoat.toml with the packaged values. Run at build time by cmake/Packaging.cmake:
#   cmake -DINPUT=config/dnsmoat.toml -DOUTPUT=<build>/package/dnsmoat.toml -P packaged-config.cmake
# - [server] listen: port 53 on every address, IPv4 and IPv6;
# - list paths "config/..." become "/etc/dnsmoat/...", where the package puts those lists.
# The other paths of the example (/var/lib/dnsmoat, /run/dnsmoat) are the packaged ones already.
# A change to the example that these edits no longer match stops the build, so the package
# never ships the development values (port 5353) by accident.
cmake_minimum_required(VERSION 3.25)

file(READ "${INPUT}" text)

set(dev_listen [=[listen = ["127.0.0.1:5353", "[::1]:5353"]]=])
set(pkg_listen [=[listen = ["0.0.0.0:53", "[::]:53"]]=])
string(FIND "${text}" "\n${dev_listen}\n" at)
if(at EQUAL -1)
    message(FATAL_ERROR "${INPUT}: no line '${dev_listen}' in [server] to replace with the "
        "packaged '${pkg_listen}' (update cmake/debian/packaged-config.cmake)")
endif()
string(REPLACE "\n${dev_listen}\n" "\n${pkg_listen}\n" text "${text}")

string(REGEX MATCHALL "\npath = \"config/" list_paths "${text}")
list(LENGTH list_paths n)
if(n EQUAL 0)
    message(FATAL_ERROR "${INPUT}: no list 'path = \"config/...\"' to point at /etc/dnsmoat")
endif()
string(REPLACE "\npath = \"config/" "\npath = \"/etc/dnsmoat/" text "${text}")
if(text MATCHES "\"config/")
    message(FATAL_ERROR "${INPUT}: a path under config/ is left that the package does not "
        "install (update cmake/debian/packaged-config.cmake)")
endif()

# The example's sample entries (a conditional forward to 192.168.1.1, a "kids" group on
# 192.168.1.64/28, local records for nas.lan, ...) would act on a real home network: between
# the "# >>> example" and "# <<< end of example" lines every setting line is commented out.
set(begin_marker "# >>> example: the installed package has the lines below commented out")
set(end_marker "# <<< end of example")
# Line by line with string(FIND): a CMake list would not split inside the TOML's "[...]".
set(out "")
set(inside FALSE)
set(samples 0)
set(rest "${text}")
while(NOT rest STREQUAL "")
    string(FIND "${rest}" "\n" eol)
    if(eol EQUAL -1)
        set(line "${rest}")
        set(rest "")
    else()
        string(SUBSTRING "${rest}" 0 ${eol} line)
        math(EXPR next "${eol} + 1")
        string(SUBSTRING "${rest}" ${next} -1 rest)
    endif()
    if(line STREQUAL begin_marker)
        set(inside TRUE)
        math(EXPR samples "${samples} + 1")
        set(line "# Example (remove the leading \"# \" of its lines to use it):")
    elseif(line STREQUAL end_marker)
        set(inside FALSE)
        set(line "# (end of example)")
    elseif(inside AND NOT line STREQUAL "" AND NOT line MATCHES "^#")
        set(line "# ${line}")
    endif()
    string(APPEND out "${line}\n")
endwhile()
if(inside OR samples EQUAL 0)
    message(FATAL_ERROR "${INPUT}: the '${begin_marker}' and '${end_marker}' lines around the "
        "example entries are missing or unbalanced")
endif()
set(text "${out}")

file(WRITE "${OUTPUT}.tmp" "${text}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
