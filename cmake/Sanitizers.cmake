# Sanitizer and fuzzing instrumentation. Applied to the whole build (every target, tests
# included) because mixing instrumented and uninstrumented C++ code gives false reports.
#
#   MOAT_SANITIZE   comma list passed to -fsanitize= (e.g. "address,undefined", "thread");
#                   the asan preset sets "address,undefined".
#   MOAT_BUILD_FUZZ clang only: libraries and tests get -fsanitize=fuzzer-no-link,address,undefined;
#                   fuzz targets add -fsanitize=fuzzer at link (see cmake/Fuzzing.cmake).
#
# Recovery is disabled: the first report aborts the test, so CI cannot pass over one.

set(MOAT_SANITIZE "" CACHE STRING "Sanitizers to build with, e.g. address,undefined")

set(_moat_sanitize "${MOAT_SANITIZE}")

if(MOAT_BUILD_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        message(FATAL_ERROR "MOAT_BUILD_FUZZ needs clang (libFuzzer); use the 'fuzz' preset "
            "(clang++-14), not ${CMAKE_CXX_COMPILER_ID}")
    endif()
    if(_moat_sanitize STREQUAL "")
        set(_moat_sanitize "address,undefined")
    endif()
    add_compile_options(-fsanitize=fuzzer-no-link)
    add_link_options(-fsanitize=fuzzer-no-link)
    # Lets code skip work that only slows fuzzing down (e.g. expensive logging) if ever needed.
    add_compile_definitions(MOAT_FUZZING_BUILD=1)
endif()

if(NOT _moat_sanitize STREQUAL "")
    set(MOAT_SANITIZER_FLAGS
        -fsanitize=${_moat_sanitize}
        -fno-sanitize-recover=all
        -fno-omit-frame-pointer)
    add_compile_options(${MOAT_SANITIZER_FLAGS})
    add_link_options(-fsanitize=${_moat_sanitize})
    if(_moat_sanitize MATCHES "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        # GCC warns that TSan does not model std::atomic_thread_fence, which Asio's handler
        # invocation uses; our code has none, and every hand-over between threads goes through
        # a mutex (Asio's scheduler, our queues), which TSan does see.
        add_compile_options(-Wno-tsan)
    endif()
    message(STATUS "dnsmoat: sanitizers: ${_moat_sanitize}")
endif()
