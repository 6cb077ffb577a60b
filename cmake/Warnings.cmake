# Project warnings, applied per target so third-party code (found packages, system headers) is
# never compiled with them. GCC >= 12 and Clang >= 14 accept every flag below.
#
#   moat_target_warnings(<target>)            one target (idempotent)
#   moat_warnings_for_directory(<dir>)        every first-party target defined under <dir>
#
# The top-level CMakeLists.txt calls moat_warnings_for_directory() on the whole tree after all
# subdirectories are added, so a module's CMakeLists.txt need not call anything.

set(MOAT_WARNING_FLAGS
    -Wall
    -Wextra
    -Wpedantic
    -Wconversion
    -Wsign-conversion
    -Wshadow
    -Wnon-virtual-dtor
    -Wold-style-cast
    -Wcast-align
    -Wunused
    -Woverloaded-virtual
    -Wnull-dereference
    -Wdouble-promotion
    -Wformat=2
    -Wimplicit-fallthrough
)

function(moat_target_warnings target)
    if(NOT TARGET ${target})
        message(FATAL_ERROR "moat_target_warnings: no target '${target}'")
    endif()
    get_target_property(_type ${target} TYPE)
    get_target_property(_imported ${target} IMPORTED)
    get_target_property(_done ${target} MOAT_WARNINGS_APPLIED)
    # Interface libraries compile nothing; imported targets are not ours; apply once.
    if(_type STREQUAL "INTERFACE_LIBRARY" OR _type STREQUAL "UTILITY" OR _imported OR _done)
        return()
    endif()
    target_compile_options(${target} PRIVATE ${MOAT_WARNING_FLAGS})
    if(MOAT_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
        # GCC's link-time optimisation compiles again at the link, and warns there (it inlines
        # across files); without -Werror on the link those warnings would only be printed.
        if(CMAKE_INTERPROCEDURAL_OPTIMIZATION AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
           AND _type MATCHES "EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY")
            target_link_options(${target} PRIVATE -Werror)
        endif()
    endif()
    set_target_properties(${target} PROPERTIES MOAT_WARNINGS_APPLIED TRUE)
endfunction()

function(moat_warnings_for_directory dir)
    get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(_t IN LISTS _targets)
        moat_target_warnings(${_t})
    endforeach()
    get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    foreach(_d IN LISTS _subdirs)
        moat_warnings_for_directory("${_d}")
    endforeach()
endfunction()
