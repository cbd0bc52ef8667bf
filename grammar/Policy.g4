// The policyc policy language: placement rules for Kubernetes pods.
//
//   policy GPUMemoryFit "Fits pods by the GPU memory they declare."
//     weight 1
//     let need  = pod.requests["nvidia.com/gpu-memory"]
//     let total = node.labels["nvidia.com/gpu-memory.total"].quantity() ?? node.allocatable["nvidia.com/gpu-memory"]
//     let free  = total - node.requested["nvidia.com/gpu-memory"]
//     filter need == 0 or need <= free
//       reason "GPU memory insufficient"
//       detail "{node.name} has {free} of GPU memory free of {total}; the pod needs {need}"
//     score if total == 0 then 0 else (free - need) * 100 / total
//
// A file holds one or more policies. Members run top to bottom; `let` and
// `def` names are visible below their definition. The language is total:
// no recursion, and loops only over finite pod- and node-side collections.
// docs/language.md is the reference.
grammar Policy;

file
  : policyDecl* EOF
  ;

// One expression and nothing else: `{...}` interpolations in reason and
// detail strings are parsed with this rule.
exprOnly
  : expr EOF
  ;

// `x in C` / `(k, v) in C` alone: the `each` of a filter in the YAML form.
eachOnly
  : binder IN expr EOF
  ;

// A type alone: `def` parameter types in the YAML form.
typeOnly
  : typeExpr EOF
  ;

policyDecl
  : POLICY name=IDENT doc=STRING? member*
  ;

member
  : WEIGHT INT                                                     # weightMember
  | LET IDENT ASSIGN expr                                          # letMember
  | PARAM IDENT COLON typeExpr ASSIGN expr                          # paramMember
  | DEF IDENT LPAREN (param (COMMA param)*)? RPAREN ASSIGN expr    # defMember
  | FILTER (FOR binder IN expr COLON)? expr reasonClause? detailClause? (UNRESOLVABLE | ABORTS)?  # filterMember
  | PREFILTER expr reasonClause? detailClause? UNRESOLVABLE?                      # prefilterMember
  | SCORE expr (NORMALIZE (IDENT | NONE))?                         # scoreMember
  | WHEN expr                                                      # whenMember
  ;

param : IDENT COLON typeExpr ;

// `int`, `string?`, `Toleration`, `list<string>`
typeExpr : IDENT (LT typeExpr GT)? QUESTION? ;

reasonClause : REASON STRING ;
detailClause : DETAIL STRING ;

binder
  : IDENT                                   # singleBinder
  | LPAREN IDENT COMMA IDENT RPAREN         # pairBinder
  ;

// Alternatives are listed from the tightest binding to the loosest.
expr
  : primary                                                        # primaryExpr
  | expr DOT fieldName LPAREN (expr (COMMA expr)*)? RPAREN         # methodExpr
  | expr DOT fieldName                                             # fieldExpr
  | expr LBRACK expr RBRACK                                        # indexExpr
  | op=(MINUS | NOT) expr                                          # unaryExpr
  | expr op=(STAR | SLASH | PERCENT) expr                          # binaryExpr
  | expr op=(PLUS | MINUS) expr                                    # binaryExpr
  | expr op=COALESCE expr                                          # binaryExpr
  | expr op=(EQ | NE | LT | LE | GT | GE | IN) expr                # binaryExpr
  | expr NOT IN expr                                               # notInExpr
  | expr op=AND expr                                               # binaryExpr
  | expr op=OR expr                                                # binaryExpr
  | IF expr THEN expr ELSE expr                                    # ifExpr
  | kind=(ANY | ALL | SUM) binder IN expr COLON expr               # foldExpr
  | kind=(COUNT | FIRST) binder IN expr (WHERE expr)?              # selectExpr
  ;

// After a dot any word names a field, keywords included (`term.weight`).
fieldName
  : IDENT | POLICY | WEIGHT | LET | PARAM | DEF | FILTER | PREFILTER | SCORE | WHEN | REASON | DETAIL | UNRESOLVABLE | ABORTS
  | NORMALIZE | FOR
  | ANY | ALL | SUM | COUNT | FIRST | WHERE | CEL
  ;

primary
  : INT                                     # intLiteral
  | QUANTITY                                # quantityLiteral
  | STRING                                  # stringLiteral
  | CEL STRING                              # celExpr       // a CEL device selector on the Device in scope
  | (TRUE | FALSE)                          # boolLiteral
  | NONE                                    # noneLiteral
  | IDENT LPAREN (expr (COMMA expr)*)? RPAREN  # callExpr
  | IDENT                                   # nameExpr
  | LPAREN expr RPAREN                      # parenExpr
  | LBRACE (expr (COMMA expr)*)? COMMA? RBRACE   # setLiteral
  | LBRACK (expr (COMMA expr)*)? COMMA? RBRACK   # listLiteral
  ;

POLICY    : 'policy' ;
WEIGHT    : 'weight' ;
LET       : 'let' ;
PARAM     : 'param' ;
DEF       : 'def' ;
FILTER    : 'filter' ;
PREFILTER : 'prefilter' ;
SCORE     : 'score' ;
WHEN      : 'when' ;
REASON    : 'reason' ;
DETAIL    : 'detail' ;
UNRESOLVABLE : 'unresolvable' ;
ABORTS    : 'aborts' ;
NORMALIZE : 'normalize' ;
FOR       : 'for' ;
IF        : 'if' ;
THEN      : 'then' ;
ELSE      : 'else' ;
ANY       : 'any' ;
ALL       : 'all' ;
SUM       : 'sum' ;
COUNT     : 'count' ;
FIRST     : 'first' ;
WHERE     : 'where' ;
CEL       : 'cel' ;
IN        : 'in' ;
AND       : 'and' ;
OR        : 'or' ;
NOT       : 'not' ;
TRUE      : 'true' ;
FALSE     : 'false' ;
NONE      : 'none' ;

COALESCE : '??' ;
EQ       : '==' ;
NE       : '!=' ;
LE       : '<=' ;
GE       : '>=' ;
LT       : '<' ;
GT       : '>' ;
ASSIGN   : '=' ;
QUESTION : '?' ;
PLUS     : '+' ;
MINUS    : '-' ;
STAR     : '*' ;
SLASH    : '/' ;
PERCENT  : '%' ;
DOT      : '.' ;
COMMA    : ',' ;
COLON    : ':' ;
LPAREN   : '(' ;
RPAREN   : ')' ;
LBRACK   : '[' ;
RBRACK   : ']' ;
LBRACE   : '{' ;
RBRACE   : '}' ;

// A quantity: digits, an optional fraction, and a suffix (500m, 1.5, 16Gi,
// 2k, 1e3). The lexer takes any letters after the digits; sema checks them
// against Kubernetes' suffixes, so `16Kb` gets a message of its own.
QUANTITY : DIGITS ('.' DIGITS)? [a-zA-Z] [a-zA-Z0-9]*
         | DIGITS '.' DIGITS
         ;
INT      : DIGITS ;
fragment DIGITS : [0-9]+ ;

IDENT    : [a-zA-Z_] [a-zA-Z0-9_]* ;
// Double-quoted, with \" \\ \n \t \{ \} escapes; `{expr}` interpolates in
// reason and detail strings. Single-quoted strings have no escapes and no
// interpolation, so they fit inside an interpolation: "{node.labels['zone']}".
STRING   : '"' ( '\\' . | ~["\\\r\n] )* '"'
         | '\'' ~['\r\n]* '\''
         ;

COMMENT  : ('#' | '//') ~[\r\n]* -> skip ;
WS       : [ \t\r\n]+ -> skip ;
// Anything else is one bad character: the parser reports it with a position.
BAD_CHAR : . ;
