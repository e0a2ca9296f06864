# cmake -DLOOPR=<loopr binary> -DKIND=man|bash|zsh -DOUT=<file> -P generate_doc.cmake
# Writes `loopr --generate-docs KIND` to OUT (and OUT.gz, gzip -9n, for a man page).
execute_process(COMMAND ${LOOPR} --generate-docs ${KIND} OUTPUT_FILE ${OUT}.tmp
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${LOOPR} --generate-docs ${KIND} failed (${rc}): ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
if(KIND STREQUAL "man")
  execute_process(COMMAND gzip -9 -n -c ${OUT} OUTPUT_FILE ${OUT}.gz RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${OUT} failed")
  endif()
endif()
