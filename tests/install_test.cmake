# The installed package, as a user meets it: `cmake --install` the build tree
# into an empty prefix, then build against that prefix only
#   1. examples/consumer with find_package(uringkit) (uringkit::uringkit and
#      the coroutine layer, uringkit::async), and
#   2. examples/consumer/main.cpp, examples/cat.cpp and examples/nop_batch.cpp
#      with the flags `pkg-config --cflags --libs uringkit` gives, and the
#      coroutine programs (examples/consumer/async_main.cpp,
#      read_with_timeouts.cpp, open_and_stat.cpp, echo_server.cpp,
#      append_log.cpp) with
#      `uringkit-async`'s,
# and run what was built, checking its output.
#
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DCXX=... [-DSANITIZE=...]
#         -P tests/install_test.cmake
cmake_minimum_required(VERSION 3.25)

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR CXX)
  if(NOT ${var})
    message(FATAL_ERROR "install_test: -D${var}=... is required")
  endif()
endforeach()

# Runs a command; stops the test with its output when it fails.
function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_test: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

run_checked("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE config_files ${prefix}/*/uringkitConfig.cmake)
file(GLOB_RECURSE pc_files ${prefix}/*/uringkit.pc)
if(NOT config_files OR NOT pc_files)
  message(FATAL_ERROR "install_test: no uringkitConfig.cmake or uringkit.pc under ${prefix}")
endif()

# One version everywhere: the header, the pkg-config file and the CMake package.
file(GLOB_RECURSE version_headers ${prefix}/*/uringkit/version.hpp)
if(NOT version_headers)
  message(FATAL_ERROR "install_test: no uringkit/version.hpp under ${prefix}")
endif()
file(STRINGS ${version_headers} header_version REGEX "define URINGKIT_VERSION_STRING")
file(STRINGS ${pc_files} pc_version REGEX "^Version:")
string(REGEX REPLACE ".*\"(.*)\".*" "\\1" header_version "${header_version}")
string(REGEX REPLACE "^Version: *" "" pc_version "${pc_version}")
if(NOT header_version STREQUAL pc_version OR header_version STREQUAL "")
  message(FATAL_ERROR "install_test: version.hpp says '${header_version}', uringkit.pc '${pc_version}'")
endif()
# Man pages (written by the binary from its option definitions), the
# library's uringkit(7), the shell completions and the documentation --help
# points to.
foreach(installed
    share/man/man1/uringkit.1 share/man/man1/uringkit-probe.1 share/man/man1/uringkit-bench.1
    share/man/man1/uringkit-bench-net.1 share/man/man1/uringkit-cp.1
    share/man/man1/uringkit-readfiles.1 share/man/man1/uringkit-xxhsum.1
    share/man/man1/uringkit-serve.1
    share/man/man1/uringkit-load.1 share/man/man7/uringkit.7
    share/bash-completion/completions/uringkit share/zsh/vendor-completions/_uringkit
    share/doc/uringkit/README.md share/doc/uringkit/bench.md share/doc/uringkit/library.md)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "install_test: ${installed} was not installed under ${prefix}")
  endif()
endforeach()
file(READ ${prefix}/share/man/man1/uringkit-probe.1 probe_page)
string(FIND "${probe_page}" "\\-\\-json" json_at)  # roff writes --json as \-\-json
if(json_at LESS 0)
  message(FATAL_ERROR "install_test: uringkit-probe.1 does not document --json")
endif()

# A sanitized build installs a sanitized library: its users must link the runtime.
set(san_flags "")
if(SANITIZE)
  set(san_flags -fsanitize=${SANITIZE})
endif()
string(REPLACE ";" " " san_string "${san_flags}")

set(expected "hello from an installed uringkit\n")

# ---- 1. find_package ---------------------------------------------------------
set(build ${WORK_DIR}/consumer-cmake)
run_checked("configuring examples/consumer"
  ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${build}
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  "-DCMAKE_CXX_FLAGS=${san_string}" "-DCMAKE_EXE_LINKER_FLAGS=${san_string}")
# The package must come from the prefix, not from the build tree or the system.
if(NOT run_out MATCHES "uringkit 0\\.1\\.[0-9]+ from ${prefix}/")
  message(FATAL_ERROR "install_test: find_package did not use ${prefix}:\n${run_out}")
endif()
run_checked("building examples/consumer" ${CMAKE_COMMAND} --build ${build})
run_checked("running the find_package consumer" ${build}/consumer)
if(NOT run_out STREQUAL expected)
  message(FATAL_ERROR "install_test: consumer printed '${run_out}', expected '${expected}'")
endif()
set(expected_async "hello from an installed uringkit::async\n")
run_checked("running the find_package coroutine consumer" ${build}/async_consumer)
if(NOT run_out STREQUAL expected_async)
  message(FATAL_ERROR "install_test: async_consumer printed '${run_out}', expected '${expected_async}'")
endif()

# ---- 2. pkg-config -------------------------------------------------------------
find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
get_filename_component(pc_dir ${pc_files} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
run_checked("pkg-config" ${PKG_CONFIG} --cflags --libs uringkit)
string(STRIP "${run_out}" pc_flags)
# The .pc is relocatable: its paths must point into the prefix it was installed to.
if(NOT pc_flags MATCHES "-I${prefix}/")
  message(FATAL_ERROR "install_test: pkg-config flags do not point into ${prefix}: ${pc_flags}")
endif()
if(pc_flags MATCHES "-std=")
  message(FATAL_ERROR "install_test: pkg-config forces a language standard over the user's: ${pc_flags}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
# pkg-config gives paths, not a standard: the user names C++20 (or later).
list(PREPEND pc_flags -std=c++20)

foreach(program consumer/main cat nop_batch)
  string(REPLACE "/" "_" exe ${program})
  run_checked("compiling examples/${program}.cpp with pkg-config flags"
    ${CXX} ${san_flags} ${SOURCE_DIR}/examples/${program}.cpp ${pc_flags} -o ${WORK_DIR}/${exe})
endforeach()
run_checked("pkg-config uringkit-async" ${PKG_CONFIG} --cflags --libs uringkit-async)
string(STRIP "${run_out}" pc_async_flags)
if(NOT pc_async_flags MATCHES "-luringkit_async.*-luringkit")
  message(FATAL_ERROR "install_test: pkg-config uringkit-async gives: ${pc_async_flags}")
endif()
separate_arguments(pc_async_flags UNIX_COMMAND "${pc_async_flags}")
list(PREPEND pc_async_flags -std=c++20)
foreach(program consumer/async_main read_with_timeouts open_and_stat echo_server append_log)
  string(REPLACE "/" "_" exe ${program})
  run_checked("compiling examples/${program}.cpp with pkg-config uringkit-async flags"
    ${CXX} ${san_flags} ${SOURCE_DIR}/examples/${program}.cpp ${pc_async_flags} -o ${WORK_DIR}/${exe})
endforeach()

# Every installed header compiles with nothing but the package's flags.
file(GLOB_RECURSE headers RELATIVE ${prefix}/include ${prefix}/include/uringkit/*.hpp)
if(NOT headers)
  message(FATAL_ERROR "install_test: no headers under ${prefix}/include/uringkit")
endif()
# The installed headers are exactly include/uringkit/ (plus the generated
# version.hpp): a header there that is not installed, or one installed from
# elsewhere, fails here.
file(GLOB_RECURSE source_headers RELATIVE ${SOURCE_DIR}/include ${SOURCE_DIR}/include/uringkit/*.hpp)
list(APPEND source_headers uringkit/version.hpp)
list(SORT source_headers)
set(installed_headers ${headers})
list(SORT installed_headers)
if(NOT source_headers STREQUAL installed_headers)
  set(only_source ${source_headers})
  list(REMOVE_ITEM only_source ${installed_headers})
  set(only_installed ${installed_headers})
  list(REMOVE_ITEM only_installed ${source_headers})
  message(FATAL_ERROR "install_test: the installed headers differ from include/uringkit/: "
                      "not installed: ${only_source}; installed but not in include/: ${only_installed}")
endif()
set(all_headers "")
foreach(h ${headers})
  string(APPEND all_headers "#include <${h}>\n")
endforeach()
file(WRITE ${WORK_DIR}/all_headers.cpp "${all_headers}int main() { return 0; }\n")
run_checked("compiling every installed header with pkg-config flags"
  ${CXX} ${san_flags} -Wall -Wextra -Werror ${WORK_DIR}/all_headers.cpp ${pc_flags} -o ${WORK_DIR}/all_headers)

# Below C++20 the headers stop at once with one line saying what to do.
file(WRITE ${WORK_DIR}/cxx17.cpp "#include <uringkit/ring/ring.hpp>\nint main() { return 0; }\n")
list(REMOVE_ITEM pc_flags -std=c++20)
execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only ${WORK_DIR}/cxx17.cpp ${pc_flags}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "uringkit needs C\\+\\+20")
  message(FATAL_ERROR "install_test: a C++17 compile of the headers did not stop with the C++20 message:\n${err}")
endif()

run_checked("running the pkg-config consumer" ${WORK_DIR}/consumer_main)
if(NOT run_out STREQUAL expected)
  message(FATAL_ERROR "install_test: pkg-config consumer printed '${run_out}', expected '${expected}'")
endif()
run_checked("running the pkg-config coroutine consumer" ${WORK_DIR}/consumer_async_main)
if(NOT run_out STREQUAL expected_async)
  message(FATAL_ERROR "install_test: pkg-config async consumer printed '${run_out}', expected '${expected_async}'")
endif()

# cat, built against the package, copies a file byte for byte.
set(input ${WORK_DIR}/input.bin)
string(REPEAT "uringkit installed package test line\n" 20000 text)
file(WRITE ${input} "${text}")
execute_process(COMMAND ${WORK_DIR}/cat ${input} OUTPUT_FILE ${WORK_DIR}/output.bin RESULT_VARIABLE rc)
file(SHA256 ${input} want)
file(SHA256 ${WORK_DIR}/output.bin got)
if(NOT rc EQUAL 0 OR NOT want STREQUAL got)
  message(FATAL_ERROR "install_test: cat built against the package: status ${rc}, copy differs")
endif()

# read_with_timeouts, built against the package, reads the same file as 100
# coroutines with a deadline each and writes it back byte for byte.
execute_process(COMMAND ${WORK_DIR}/read_with_timeouts ${input} 100 5000 OUTPUT_FILE ${WORK_DIR}/pieces.bin RESULT_VARIABLE rc)
file(SHA256 ${WORK_DIR}/pieces.bin got)
if(NOT rc EQUAL 0 OR NOT want STREQUAL got)
  message(FATAL_ERROR "install_test: read_with_timeouts built against the package: status ${rc}, output differs")
endif()
file(SIZE ${input} input_size)
run_checked("running open_and_stat built against the package" ${WORK_DIR}/open_and_stat ${input})
if(NOT run_out MATCHES "^${input} ${input_size} [0-7]+\n$")
  message(FATAL_ERROR "install_test: open_and_stat printed '${run_out}'")
endif()

run_checked("running nop_batch built against the package" ${WORK_DIR}/nop_batch 2000 16)
if(NOT run_out MATCHES "\n16 +2000 +[0-9]+")
  message(FATAL_ERROR "install_test: nop_batch printed:\n${run_out}")
endif()

file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "install_test: find_package and pkg-config consumers built and ran against ${prefix}")
