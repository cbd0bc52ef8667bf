// The Common Expression Language (CEL), as the language definition gives
// its syntax (github.com/google/cel-spec, doc/langdef.md, "Syntax"): what
// Kubernetes' Dynamic Resource Allocation device selectors are written in.
// Written from that definition; compiler/cel turns the tree into its AST
// (macros such as has(), all() and cel.bind() included), checks it and
// evaluates it.
//
//   Expr           = ConditionalOr ["?" ConditionalOr ":" Expr] ;
//   ConditionalOr  = [ConditionalOr "||"] ConditionalAnd ;
//   ConditionalAnd = [ConditionalAnd "&&"] Relation ;
//   Relation       = [Relation Relop] Addition ;
//   Addition       = [Addition ("+" | "-")] Multiplication ;
//   Multiplication = [Multiplication ("*" | "/" | "%")] Unary ;
//   Unary          = Member | "!" {"!"} Member | "-" {"-"} Member ;
//   Member         = Primary | Member "." SELECTOR ["(" [ExprList] ")"]
//                  | Member "[" Expr "]" ;
//   Primary        = ["."] IDENT ["(" [ExprList] ")"] | "(" Expr ")"
//                  | "[" [ExprList] [","] "]" | "{" [MapInits] [","] "}"
//                  | LITERAL ;
grammar Cel;

start : e=expr EOF ;

expr : cond=conditionalOr (QUESTION then=conditionalOr COLON otherwise=expr)? ;

conditionalOr : first=conditionalAnd (OR rest+=conditionalAnd)* ;

conditionalAnd : first=relation (AND rest+=relation)* ;

relation
  : addition                                                            # relationAddition
  | left=relation op=(LESS | LESS_EQUALS | GREATER_EQUALS | GREATER | EQUALS | NOT_EQUALS | IN) right=relation  # relationOp
  ;

addition
  : multiplication                                        # additionMultiplication
  | left=addition op=(PLUS | MINUS) right=multiplication  # additionOp
  ;

multiplication
  : unary                                                      # multiplicationUnary
  | left=multiplication op=(STAR | SLASH | PERCENT) right=unary  # multiplicationOp
  ;

unary
  : member                 # unaryMember
  | (ops+=EXCLAM)+ member  # unaryNot
  | (ops+=MINUS)+ member   # unaryNegate
  ;

member
  : primary                                                          # memberPrimary
  | operand=member DOT field=IDENTIFIER                              # memberSelect
  | operand=member DOT method=IDENTIFIER LPAREN args=exprList? RPAREN  # memberCall
  | operand=member LBRACKET index=expr RBRACKET                      # memberIndex
  ;

primary
  : leadingDot=DOT? id=IDENTIFIER (call=LPAREN args=exprList? RPAREN)?  # primaryIdent
  | LPAREN inner=expr RPAREN                                            # primaryNested
  | LBRACKET elems=exprList? COMMA? RBRACKET                            # primaryList
  | LBRACE entries=mapInits? COMMA? RBRACE                              # primaryMap
  | literal                                                             # primaryLiteral
  ;

exprList : items+=expr (COMMA items+=expr)* ;

mapInits : keys+=expr COLON values+=expr (COMMA keys+=expr COLON values+=expr)* ;

literal
  : sign=MINUS? tok=NUM_INT    # intLiteral
  | tok=NUM_UINT               # uintLiteral
  | sign=MINUS? tok=NUM_FLOAT  # doubleLiteral
  | tok=STRING                 # stringLiteral
  | tok=BYTES                  # bytesLiteral
  | tok=CEL_TRUE               # trueLiteral
  | tok=CEL_FALSE              # falseLiteral
  | tok=NUL                    # nullLiteral
  ;

EQUALS         : '==' ;
NOT_EQUALS     : '!=' ;
IN             : 'in' ;
LESS           : '<' ;
LESS_EQUALS    : '<=' ;
GREATER_EQUALS : '>=' ;
GREATER        : '>' ;
AND            : '&&' ;
OR             : '||' ;
LBRACKET       : '[' ;
RBRACKET       : ']' ;
LBRACE         : '{' ;
RBRACE         : '}' ;
LPAREN         : '(' ;
RPAREN         : ')' ;
DOT            : '.' ;
COMMA          : ',' ;
MINUS          : '-' ;
EXCLAM         : '!' ;
QUESTION       : '?' ;
COLON          : ':' ;
PLUS           : '+' ;
STAR           : '*' ;
SLASH          : '/' ;
PERCENT        : '%' ;
CEL_TRUE       : 'true' ;
CEL_FALSE      : 'false' ;
NUL            : 'null' ;

fragment BACKSLASH : '\\' ;
fragment LETTER : [A-Za-z] ;
fragment DIGIT  : [0-9] ;
fragment EXPONENT : ('e' | 'E') ('+' | '-')? DIGIT+ ;
fragment HEXDIGIT : [0-9a-fA-F] ;
fragment RAW : [rR] ;
fragment ESC_SEQ
  : BACKSLASH [abfnrtv"'\\?`]
  | BACKSLASH [xX] HEXDIGIT HEXDIGIT
  | BACKSLASH 'u' HEXDIGIT HEXDIGIT HEXDIGIT HEXDIGIT
  | BACKSLASH 'U' HEXDIGIT HEXDIGIT HEXDIGIT HEXDIGIT HEXDIGIT HEXDIGIT HEXDIGIT HEXDIGIT
  | BACKSLASH [0-3] [0-7] [0-7]
  ;

WHITESPACE : [ \t\r\n\f]+ -> channel(HIDDEN) ;
COMMENT : '//' ~[\r\n]* -> channel(HIDDEN) ;

NUM_FLOAT
  : DIGIT+ '.' DIGIT+ EXPONENT?
  | DIGIT+ EXPONENT
  | '.' DIGIT+ EXPONENT?
  ;

NUM_INT : DIGIT+ | '0x' HEXDIGIT+ ;

NUM_UINT : DIGIT+ ('u' | 'U') | '0x' HEXDIGIT+ ('u' | 'U') ;

STRING
  : '"' (ESC_SEQ | ~('\\' | '"' | '\n' | '\r'))* '"'
  | '\'' (ESC_SEQ | ~('\\' | '\'' | '\n' | '\r'))* '\''
  | '"""' (ESC_SEQ | ~('\\'))*? '"""'
  | '\'\'\'' (ESC_SEQ | ~('\\'))*? '\'\'\''
  | RAW '"' ~('"' | '\n' | '\r')* '"'
  | RAW '\'' ~('\'' | '\n' | '\r')* '\''
  | RAW '"""' .*? '"""'
  | RAW '\'\'\'' .*? '\'\'\''
  ;

BYTES : ('b' | 'B') STRING ;

IDENTIFIER : (LETTER | '_') (LETTER | DIGIT | '_')* ;

// Anything else is one character the lexer reports.
ERROR_CHAR : . ;
