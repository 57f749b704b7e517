package bilingual

//go:generate sh ../../scripts/gen-cedict
