# Writes the installed copy of one article of docs/ (CMakeLists.txt, "Docs"):
#   cmake -DINPUT=docs/<name>.md -DOUTPUT=<build>/doc/<name>.md -P AccelInstalledDoc.cmake
# Installed, the articles lie in ${CMAKE_INSTALL_DOCDIR} (share/doc/accel) with the ABI's files in its abi/ folder,
# so a link into ../abi/ becomes abi/ and every relative link resolves in both trees. A link to any other place
# outside docs/ would break in the installed tree: it fails the build, naming the article.
file(READ "${INPUT}" text)
string(REPLACE "](../abi/" "](abi/" text "${text}")
if(text MATCHES "\\]\\(\\.\\./[^)]*\\)")
  message(FATAL_ERROR "${INPUT}: the link '${CMAKE_MATCH_0}' leaves docs/ for a place that is not installed "
                      "(only ../abi/ is, as abi/ next to the installed docs); link within docs/ or into ../abi/")
endif()
file(WRITE "${OUTPUT}" "${text}")
