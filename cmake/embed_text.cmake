# Helpers for the embed scripts (run with cmake -P) that compile data files into the binary as
# raw string literals, so kvsweep finds them from any working directory.

# Sets OUT_VAR to one `{"<name>", R"<delimiter>(<text>)<delimiter>"},` line per file in FILES.
# <name> is the file name, without STRIP_SUFFIX when given. A file holding `)<delimiter>"`
# would end its raw string early, so it is refused.
function(kvsweep_raw_string_entries out_var delimiter indent strip_suffix)
  set(body "")
  foreach(path IN LISTS ARGN)
    file(READ "${path}" text)
    string(FIND "${text}" ")${delimiter}\"" clash)
    if(NOT clash EQUAL -1)
      message(FATAL_ERROR "${path}: contains )${delimiter}\", which would end the embedded raw string")
    endif()
    get_filename_component(name "${path}" NAME)
    if(strip_suffix)
      string(REGEX REPLACE "${strip_suffix}$" "" name "${name}")
    endif()
    string(APPEND body "${indent}{\"${name}\", R\"${delimiter}(${text})${delimiter}\"},\n")
  endforeach()
  set(${out_var} "${body}" PARENT_SCOPE)
endfunction()

# Writes CONTENT to PATH only when it differs, so an unrelated reconfigure rebuilds nothing.
function(kvsweep_write_if_changed path content)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()
