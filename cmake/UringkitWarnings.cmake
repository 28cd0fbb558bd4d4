# Warnings for the project's own code, as errors: third-party headers are
# included as SYSTEM and stay out of it.
function(uringkit_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
    -Wimplicit-fallthrough -Werror)
endfunction()
