package synonyms

//go:generate sh ../../scripts/gen-wordnet
